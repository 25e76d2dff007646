# syntax=docker/dockerfile:1
# Deed's image: compiled JavaScript and production dependencies on the current Node LTS,
# run as the image's non-root `node` user (uid 1000, as the manifests' runAsUser says).
ARG NODE_IMAGE=node:26-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
# OCI labels: the release build (docs/releasing.md) passes VERSION, REVISION and CREATED.
ARG VERSION=dev REVISION=unknown CREATED=unknown
LABEL org.opencontainers.image.title="deed" \
      org.opencontainers.image.description="Kubernetes admission webhook that stamps ownership onto sandbox workloads" \
      org.opencontainers.image.source="https://github.com/deed-dev/deed" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
# Memory settings measured on this image's Node line (26.12; bench/MEASUREMENTS.md,
# "Memory"): a 2 MiB young generation, and (in the ENTRYPOINT, since NODE_OPTIONS refuses
# this V8 flag) an old generation collected at 1.5x its live size rather than V8's default
# growth. Across the whole bench on 2026-11-29, HTTP/2 included, RSS peaked at 141 MiB with
# both, against 195 MiB with the semi-space setting alone; the p99 at 1,000 reviews/s
# unchanged, CPU per review 4% above Node's defaults. Re-measured on 2026-12-02, with the
# lookup cache reading a cluster and later rules, the peak was 190 to 193 MiB
# (docs/performance.md). glibc's malloc keeps up to two arenas: with its default (eight per
# core) the buffers of a lookup cache's first list left about 9 MiB of freed memory resident
# (227,000 cached objects: peak RSS 203 MiB against 194; npm run bench:scale, 2026-12-03).
ENV NODE_ENV=production NODE_OPTIONS=--max-semi-space-size=2 MALLOC_ARENA_MAX=2
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
USER 1000:1000
EXPOSE 8443 8080
ENTRYPOINT ["node", "--heap-growing-percent=50", "dist/cli/main.js"]
CMD ["serve"]

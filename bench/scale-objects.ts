// The objects `npm run bench:scale`'s stand-in API server (bench/scale-cluster.ts) serves,
// generated from an index so that hundreds of thousands of them never sit in memory at once:
// object i of a kind lives in namespace i % K and is rebuilt, byte for byte the same, each
// time a list page, a get or a watch asks for it. Each carries Deed's stamps as Deed writes
// them (attested with the key given, or a well-formed fake), an owner reference to its
// namespace's runner pod, and kubectl's 400-byte last-applied-configuration.
import { createHash } from 'node:crypto';
import { kindRows, apiVersionOf } from '../src/policy/kinds.js';
import { signV1 } from '../src/policy/stamps/attestation.js';

/** One sandbox run: a pod, two Secrets, a ConfigMap and a workspace claim; workloads per run, below. */
const PER_RUN: Record<string, number> = {
  pods: 1,
  secrets: 2,
  configmaps: 1,
  persistentvolumeclaims: 1,
  // Workloads: 0.2 of the pod count in all.
  jobs: 0.08,
  deployments: 0.04,
  replicasets: 0.04,
  statefulsets: 0.02,
  cronjobs: 0.01,
  daemonsets: 0.005,
  replicationcontrollers: 0.005,
};
/** Service accounts in every namespace (the runner's first). */
const SERVICE_ACCOUNTS = ['runner', 'default', 'builder'];
const SHORT: Record<string, string> = {
  pods: 'sbx',
  secrets: 'sec',
  configmaps: 'cm',
  persistentvolumeclaims: 'ws',
  jobs: 'job',
  deployments: 'deploy',
  replicasets: 'rs',
  statefulsets: 'sts',
  cronjobs: 'cron',
  daemonsets: 'ds',
  replicationcontrollers: 'rc',
};

export interface KindInfo {
  resource: string;
  kind: string;
  apiVersion: string;
  /** The list path, cluster-wide: /api/v1/pods, /apis/apps/v1/deployments. */
  path: string;
}

/** The kinds Deed's lookup cache keeps (the kind table's `cache` and `cache-optional` rows), which this cluster serves. */
export function cachedKinds(): KindInfo[] {
  return kindRows()
    .filter((r) => r.lookup === 'cache' || r.lookup === 'cache-optional')
    .map((r) => ({ resource: r.resource, kind: r.kind, apiVersion: apiVersionOf(r), path: r.group === '' ? `/api/v1/${r.resource}` : `/apis/${apiVersionOf(r)}/${r.resource}` }));
}

/** Objects of each cached kind for `total` objects in `namespaces` opted-in namespaces (namespaces not counted). */
export function objectMix(total: number, namespaces: number): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(cachedKinds().map((k) => [k.resource, 0]));
  if (total <= 0) return counts;
  const accounts = Math.min(SERVICE_ACCOUNTS.length * namespaces, total);
  counts.serviceaccounts = accounts;
  const weight = Object.values(PER_RUN).reduce((a, b) => a + b, 0);
  const runs = Math.floor((total - accounts) / weight);
  let used = accounts;
  for (const [resource, w] of Object.entries(PER_RUN)) {
    if (!(resource in counts)) continue;
    counts[resource] = Math.floor(runs * w);
    used += counts[resource];
  }
  counts.configmaps! += total - used; // the rounding's remainder, so the total is exact
  return counts;
}

export function namespaceName(j: number): string {
  // The first two are the fixtures' (bench/reviews.ts): its reviews are judged there.
  return j === 0 ? 'sandbox-a' : j === 1 ? 'sandbox-b' : `sandbox-${String(j).padStart(4, '0')}`;
}

export function namespaceIndex(name: string): number | undefined {
  if (name === 'sandbox-a') return 0;
  if (name === 'sandbox-b') return 1;
  const m = /^sandbox-(\d{4,})$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** A uid that looks like one, the same for the same seed. */
function uid(seed: string): string {
  const h = createHash('sha1').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface Generator {
  counts: Record<string, number>;
  kinds: KindInfo[];
  /** The namespace of object `i` of `resource`, as its index. */
  namespaceOf(resource: string, i: number): number;
  /** Object `i` of `resource` (i < counts[resource]); metadata only (PartialObjectMetadata) or whole. */
  object(resource: string, i: number, metadataOnly: boolean, resourceVersion: string): Record<string, unknown>;
  nameOf(resource: string, i: number): string;
  /** The index of the object so named in that namespace, if this generator made one. */
  indexOf(resource: string, namespace: number, name: string): number | undefined;
}

/**
 * `key`: the attestation key Deed verifies with (its --cert-dir's attestation.key), so the
 * stamps verify; without it, a well-formed attestation that does not.
 */
export function generator(total: number, namespaces: number, key: Buffer | undefined, claims: ClaimShape = 'bound'): Generator {
  const counts = objectMix(total, namespaces);
  const kinds = cachedKinds();
  const byResource = new Map(kinds.map((k) => [k.resource, k]));
  const runnerUid = Array.from({ length: namespaces }, (_, j) => uid(`runner-0/${j}`));
  // Pods 0..K-1 are the namespaces' runner pods; the others are the sandboxes they made.
  const namespaceOf = (_resource: string, i: number) => i % namespaces;
  const nameOf = (resource: string, i: number) => {
    if (resource === 'serviceaccounts') return SERVICE_ACCOUNTS[Math.floor(i / namespaces)]!;
    if (resource === 'pods' && i < namespaces) return 'runner-0';
    return `${SHORT[resource] ?? resource}-${i}`;
  };
  const indexOf = (resource: string, namespace: number, name: string) => {
    let i: number | undefined;
    if (resource === 'serviceaccounts') {
      const a = SERVICE_ACCOUNTS.indexOf(name);
      i = a < 0 ? undefined : a * namespaces + namespace;
    } else if (resource === 'pods' && name === 'runner-0') i = namespace;
    else {
      const m = new RegExp(`^${SHORT[resource] ?? resource}-(\\d+)$`).exec(name);
      i = m ? Number(m[1]) : undefined;
      if (resource === 'pods' && i !== undefined && i < namespaces) i = undefined;
    }
    return i !== undefined && i < (counts[resource] ?? 0) && namespaceOf(resource, i) === namespace ? i : undefined;
  };

  const object = (resource: string, i: number, metadataOnly: boolean, resourceVersion: string): Record<string, unknown> => {
    const info = byResource.get(resource)!;
    const j = namespaceOf(resource, i);
    const namespace = namespaceName(j);
    const name = nameOf(resource, i);
    const environment = j % 2 === 0 ? 'alpha' : 'beta';
    const seed = createHash('sha256').update(`${resource}/${i}`).digest();
    const nonce = seed.toString('hex');
    const created = new Date(Date.UTC(2026, 11, 1, 8) + i * 1000);
    const expiresAt = new Date(created.getTime() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const runner = resource === 'pods' && i < namespaces;
    const ownerUid = runnerUid[j]!;
    const owner = `${namespace}/runner-0`;
    const stamps = { kind: info.kind, namespace, environment, ownerUid, owner, nonce, expiresAt };
    const attestation = key ? signV1(key, stamps) : `v1:${createHash('sha256').update(nonce).digest('base64url')}`;
    const lastApplied = JSON.stringify({ apiVersion: info.apiVersion, kind: info.kind, metadata: { name, namespace, labels: { 'deed.dev/run-id': `run-${i}` } }, spec: { note: 'x'.repeat(400) } }).slice(0, 400);
    const metadata: Record<string, unknown> = {
      name,
      namespace,
      uid: uid(`${resource}/${i}`),
      resourceVersion,
      creationTimestamp: created.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      labels: runner
        ? { app: 'runner', 'deed.dev/run-id': 'runner' }
        : { 'deed.dev/managed': 'true', 'deed.dev/environment': environment, 'deed.dev/owner-uid': ownerUid, 'deed.dev/run-id': `run-${i}`, ...(resource === 'persistentvolumeclaims' ? { 'deed.dev/workspace': 'true' } : {}) },
      annotations: runner
        ? { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied }
        : {
            'deed.dev/owner': owner,
            'deed.dev/create-nonce': nonce,
            'deed.dev/expires-at': expiresAt,
            'deed.dev/attestation': attestation,
            'deed.dev/max-duration-seconds': '3600',
            'kubectl.kubernetes.io/last-applied-configuration': lastApplied,
          },
      // Deed adds no owner reference to a claim; a runner pod is the platform's.
      ...(runner || resource === 'persistentvolumeclaims' || resource === 'serviceaccounts' ? {} : { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: ownerUid }] }),
    };
    if (metadataOnly) return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata };
    if (resource === 'pods') metadata.managedFields = [{ manager: 'runner', operation: 'Update', apiVersion: 'v1', time: metadata.creationTimestamp, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:deed.dev/run-id': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } }];
    const whole: Record<string, unknown> = { apiVersion: info.apiVersion, kind: info.kind, metadata, ...body(resource, i, name, namespace, runner, claims) };
    return whole;
  };
  return { counts, kinds, namespaceOf, object, nameOf, indexOf };
}

/**
 * How the claims stand: `bound` to a volume, or `pending-clones`, each waiting to be filled
 * from a source claim of the longest name a claim can have (253 characters): the one fact
 * Deed keeps of a claim beyond its metadata, at its largest.
 */
export type ClaimShape = 'bound' | 'pending-clones';

/** What follows the metadata in a whole object: a realistic pod; a token of 200 bytes; a near-empty spec for the rest. */
function body(resource: string, i: number, name: string, namespace: string, runner: boolean, claims: ClaimShape): Record<string, unknown> {
  const t = '2026-12-01T08:00:00Z';
  switch (resource) {
    case 'pods':
      return {
        spec: {
          serviceAccountName: 'runner',
          automountServiceAccountToken: false,
          containers: [
            {
              name: 'main',
              image: runner ? 'registry.example/runner:3.4.1' : 'registry.example/agent:1.27.0',
              command: runner ? ['/opt/runner', 'serve'] : ['/opt/agentctl', 'serve', '--session', `s-${i}`],
              env: [
                { name: 'DEED_SESSION_ID', value: `s-${i}` },
                { name: 'WORKSPACE', value: '/workspace' },
                { name: 'LOG_LEVEL', value: 'info' },
                { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
              ],
              resources: { limits: { cpu: '2', memory: '4Gi' }, requests: { cpu: '500m', memory: '1Gi' } },
              volumeMounts: [
                { name: 'workspace', mountPath: '/workspace' },
                { name: 'runtime', mountPath: '/run/deed' },
              ],
              imagePullPolicy: 'IfNotPresent',
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
            },
          ],
          volumes: [
            { name: 'workspace', persistentVolumeClaim: { claimName: `ws-${i}` } },
            { name: 'runtime', emptyDir: { medium: 'Memory' } },
          ],
          nodeName: `node-${i % 40}`,
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          restartPolicy: 'Always',
          dnsPolicy: 'ClusterFirst',
          schedulerName: 'default-scheduler',
          securityContext: { runAsNonRoot: true, runAsUser: 1000 },
          terminationGracePeriodSeconds: 30,
          enableServiceLinks: true,
          preemptionPolicy: 'PreemptLowerPriority',
          priority: 0,
          tolerations: [
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
            { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          ],
        },
        status: {
          phase: 'Running',
          conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t })),
          hostIP: `10.0.${i % 40}.10`,
          podIP: `10.244.${(i >> 8) & 255}.${i & 255}`,
          podIPs: [{ ip: `10.244.${(i >> 8) & 255}.${i & 255}` }],
          startTime: t,
          containerStatuses: [
            {
              name: 'main',
              state: { running: { startedAt: t } },
              lastState: {},
              ready: true,
              restartCount: 0,
              image: 'registry.example/agent:1.27.0',
              imageID: `registry.example/agent@sha256:${createHash('sha256').update(name).digest('hex')}`,
              containerID: `containerd://${createHash('sha256').update(`${namespace}/${name}`).digest('hex')}`,
              started: true,
            },
          ],
          qosClass: 'Burstable',
        },
      };
    case 'secrets':
      return { type: 'Opaque', data: { token: Buffer.from(createHash('sha256').update(name).digest('hex').repeat(3)).toString('base64') } };
    case 'configmaps':
      return { data: { 'run.json': JSON.stringify({ run: i, namespace }) } };
    case 'persistentvolumeclaims':
      if (claims === 'pending-clones')
        return { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, storageClassName: 'standard', volumeMode: 'Filesystem', dataSource: { kind: 'PersistentVolumeClaim', name: `golden-${i}-`.padEnd(253, 'x') } }, status: { phase: 'Pending' } };
      return { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, storageClassName: 'standard', volumeMode: 'Filesystem', volumeName: `pvc-${i}` }, status: { phase: 'Bound' } };
    default:
      return { spec: {} };
  }
}

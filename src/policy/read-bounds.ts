// How many objects of each kind one review looks up at most (reads.ts, pod/pod-reads.ts).
/**
 * At most this many claims are looked up for one review: a pod that names more is refused for
 * the rest (their environment stays unknown) rather than fanning out without bound. The cache
 * answers what it holds; of the rest, the reader reads at most 32 by GET
 * (MAX_LIVE_READS_PER_REVIEW) and what a pod names past them by one list per kind and
 * namespace (object-reader.ts, readListed, with its own bounds).
 */
export const MAX_CLAIM_LOOKUPS = 256;

/** Likewise for the Secrets a pod names (each read as metadata only), and for its ConfigMaps. */
export const MAX_SECRET_LOOKUPS = 256;
export const MAX_CONFIGMAP_LOOKUPS = 256;

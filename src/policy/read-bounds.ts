// How many objects of each kind one review looks up at most (reads.ts, pod/pod-reads.ts).
/**
 * At most this many claims are looked up for one review: a pod that names more is refused for
 * the rest (their environment stays unknown) rather than fanning out without bound. The cache
 * answers what it holds; of the rest, the reader reads at most 32 from the API server
 * (MAX_LIVE_READS_PER_REVIEW): a pod naming 40 ConfigMaps is judged at its CREATE when the
 * cache is current, and is not bound: its binding reads what it names from the API server.
 */
export const MAX_CLAIM_LOOKUPS = 256;

/** Likewise for the Secrets a pod names (each read as metadata only), and for its ConfigMaps. */
export const MAX_SECRET_LOOKUPS = 256;
export const MAX_CONFIGMAP_LOOKUPS = 256;

// The admission.k8s.io/v1 wire types Deed reads and writes. Only the fields Deed uses
// are typed; everything else passes through untouched.

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** A Kubernetes object as Deed sees it: metadata typed, the rest opaque. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string;
  [key: string]: unknown;
}

/** A request after decoding: shapes checked, defaults filled. */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  dryRun: boolean;
}

export interface Status {
  code: number;
  message: string;
  reason?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Status;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReviewResponse {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

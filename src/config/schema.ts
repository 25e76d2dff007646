// The one schema for Deed's policy file. Defaults live here and nowhere else; the
// configuration reference in docs/configuration.md is generated from this schema.
import { z } from 'zod';
import { KEY_ID_PATTERN } from '../policy/stamps/attestation.js';
import { ENFORCEMENT_MODES } from '../policy/rules/rule-info.js';
import { HOSTNAME_PATTERN, hostnamesOverlap } from '../policy/hostnames.js';

// A label value (RFC 1123-ish, as the API server validates label values): environment
// ids end up in a label, so they must be valid label values or every stamp would fail.
const labelValue = z
  .string()
  .regex(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, 'must be a valid Kubernetes label value (63 characters at most)');

// A DNS subdomain, as label-key prefixes must be.
const dnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a DNS subdomain such as deed.dev');

// A namespace name (RFC 1123 label).
const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a namespace name');

const serviceAccountPattern = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?:(\*|[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/, 'must be NAMESPACE:NAME or NAMESPACE:*');

/** A PriorityClass's name, as the API server validates it (a DNS subdomain). */
const priorityClassName = z.string().max(253).regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a PriorityClass name (a DNS subdomain)');

export const environmentSchema = z
  .object({
    id: labelValue.describe('Environment id, stamped as the `<prefix>/environment` label.'),
    serviceAccounts: z
      .array(serviceAccountPattern)
      .default([])
      .describe('Service accounts that act for this environment: `NAMESPACE:NAME` or `NAMESPACE:*`.'),
    groups: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'User groups whose members act for this environment. Not `system:serviceaccounts:NS` (map those accounts with serviceAccounts `NS:*`, which makes their pods runners Deed guards); `system:serviceaccounts` or `system:authenticated` only in a policy of one environment.',
      ),
    claimsFrom: z
      .array(labelValue)
      .default([])
      .describe(
        "Other environments whose stamped PersistentVolumeClaims this environment's pods may mount or clone. Unset: none (rule `claim.cross-environment`).",
      ),
    hostnames: z
      .array(z.string().regex(HOSTNAME_PATTERN, 'must be a lower-case hostname, or *. and a domain'))
      .default([])
      .describe(
        "Hostnames that are this environment's alone, exact or `*.domain` (every name under it): a route (HTTPRoute, GRPCRoute, TLSRoute), an Ingress, a Gateway's or ListenerSet's listener or a cert-manager Certificate of anyone else that names one, or a wildcard over one, is refused (rule `route.hostnames`), since the gateway or ingress controller would send this environment's requests for it there (an ACME CA would issue a certificate for it); and, while any environment declares hostnames, a route that names none is refused on a Gateway not of its writer's environment (it takes the listeners' hostnames). Outside the review scope the install's ValidatingAdmissionPolicy `deed-hostnames` refuses them to all but the platform, system controllers, listed operators and break-glass: re-render and apply the install after changing them. Unset: none. No two environments' may overlap.",
      ),
    namespaces: z
      .array(dnsLabel)
      .default([])
      .describe(
        'Namespaces bound to this environment: there only its principals, its managers, system principals and break-glass may create sandbox objects. Unbound namespaces accept every environment.',
      ),
    grants: z
      .object({
        hostNetwork: z.boolean().default(false).describe("The environment's pods may use the host network namespace (rule `template.host-network`)."),
        priorityClasses: z
          .array(priorityClassName)
          .default([])
          .describe("PriorityClasses the environment's pods may name besides `template.priorityClasses` (rule `template.priority-class`): a class above other environments' lets the scheduler preempt their pods."),
      })
      .strict()
      .default({ hostNetwork: false, priorityClasses: [] })
      .describe('What the platform grants this environment beyond the sandbox defaults.'),
    managers: z
      .object({
        users: z.array(z.string().min(1)).default([]).describe('Usernames, e.g. `system:serviceaccount:platform:runner-controller`.'),
        groups: z.array(z.string().min(1)).default([]).describe('Groups.'),
      })
      .strict()
      .default({ users: [], groups: [] })
      .describe(
        "Principals that create and delete this environment's runners: guarded writes let them update and delete its objects and runner pods, and they may create in its bound namespaces. Their own creates are not stamped.",
      ),
  })
  .strict();

/** Where the Helm chart and `deed manifests` mount the attestation Secret: one file per key id. */
export const ATTESTATION_KEY_DIR = '/etc/deed/attestation';

const keyId = z
  .string()
  .regex(KEY_ID_PATTERN, 'must be a key id: letters, digits, "-", "_" or "." (63 characters at most, starting and ending with a letter or digit)');

export const ringKeySchema = z
  .object({
    id: keyId.describe('Key id, named in every attestation the key signs (`v2:<id>:...`) and the name of its entry in the attestation Secret.'),
    file: z.string().min(1).optional().describe(`File holding the key (at least 32 bytes). Default: \`${ATTESTATION_KEY_DIR}/<id>\`, where the Helm chart and \`deed manifests\` mount the Secret entry \`<id>\`.`),
  })
  .strict();

export type RingKeyConfig = z.infer<typeof ringKeySchema>;

/** The file a ring key is read from. */
export function ringKeyFile(k: RingKeyConfig): string {
  return k.file ?? `${ATTESTATION_KEY_DIR}/${k.id}`;
}

export const enforcementMode = z.enum(ENFORCEMENT_MODES);

const volumeSource = z.enum(['persistentVolumeClaim', 'emptyDir', 'projected', 'secret', 'configMap', 'ephemeral', 'csi']);

const reservedVolume = (name: string, mountPath: string, source: z.infer<typeof volumeSource>) =>
  z
    .object({
      name: z.string().min(1).default(name).describe('Volume name the platform reserves.'),
      mountPath: z.string().startsWith('/').default(mountPath).describe('Where the main container mounts it.'),
      source: volumeSource.default(source).describe('The only volume source allowed under that name.'),
    })
    .strict()
    .default({ name, mountPath, source });

/**
 * The ConfigMaps every pod gets: kube-root-ca.crt (the ServiceAccount admission plugin
 * projects it into every token volume; the root-CA publisher creates it in every namespace)
 * and OpenShift's service CA, which its build of the plugin projects too.
 */
export const WELL_KNOWN_CONFIGMAPS: readonly string[] = ['kube-root-ca.crt', 'openshift-service-ca.crt'];

// A ConfigMap name (a DNS subdomain).
const dnsSubdomainName = () => z.string().max(253).regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a ConfigMap name (a DNS subdomain)');

export const templateSchema = z
  .object({
    mainContainer: z.string().min(1).default('main').describe('Name of the designated main container.'),
    command: z.array(z.string()).optional().describe('Owned command of the main container; unset: not owned.'),
    args: z.array(z.string()).optional().describe('Owned args of the main container; unset: not owned.'),
    workingDir: z.string().optional().describe('Owned working directory of the main container; unset: not owned.'),
    controlPort: z
      .object({ name: z.string().min(1).default('control'), containerPort: z.number().int().min(1).max(65535) })
      .strict()
      .optional()
      .describe('Owned control port of the main container; no other container may expose that port number.'),
    reservedEnv: z
      .object({
        names: z.array(z.string().min(1)).default([]).describe('Reserved environment variable names.'),
        prefixes: z.array(z.string().min(1)).default(['DEED_']).describe('Reserved environment variable name prefixes.'),
      })
      .strict()
      .default({ names: [], prefixes: ['DEED_'] })
      .describe('Environment keys only the main container may carry.'),
    volumes: z
      .object({
        workspace: reservedVolume('workspace', '/workspace', 'persistentVolumeClaim'),
        runtime: reservedVolume('runtime', '/run/deed', 'emptyDir'),
        auth: reservedVolume('auth', '/var/run/secrets/deed', 'projected'),
      })
      .strict()
      .default({
        workspace: { name: 'workspace', mountPath: '/workspace', source: 'persistentVolumeClaim' },
        runtime: { name: 'runtime', mountPath: '/run/deed', source: 'emptyDir' },
        auth: { name: 'auth', mountPath: '/var/run/secrets/deed', source: 'projected' },
      })
      .describe('Reserved volumes and their owned definitions.'),
    restartPolicy: z.enum(['Always', 'OnFailure', 'Never']).default('Always').describe('Owned spec.restartPolicy.'),
    automountServiceAccountToken: z
      .boolean()
      .default(false)
      .describe(
        'Owned spec.automountServiceAccountToken. When false and a pod leaves it unset, the mutating webhook sets it and removes the token volume the API server added.',
      ),
    tokenAudiences: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Audiences a projected serviceAccountToken volume may request (say, an external vault's). Never list one the API server accepts: such a token acts for the pod's service account (rule `template.service-account-token`). Webhooks that add such a volume to every pod need theirs listed, or their pods are refused in opted-in namespaces: Istio's sidecar injector (`istio-ca`), the EKS Pod Identity and IRSA webhook (`sts.amazonaws.com`).",
      ),
    wellKnownConfigMaps: z
      .array(dnsSubdomainName())
      .default([...WELL_KNOWN_CONFIGMAPS])
      .describe(
        "ConfigMaps any pod may name whoever's they are (rules `configmap-ref.*` do not judge them): those a cluster component creates in every namespace and the API server's ServiceAccount plugin adds to every pod's token volume. `kube-root-ca.crt` holds the cluster's CA (the root-CA publisher writes it); `openshift-service-ca.crt` holds OpenShift's service CA. List only ConfigMaps a system controller keeps: no environment may create one (`configmap.well-known`), but a principal of no environment may where none is kept.",
      ),
    priorityClasses: z
      .array(priorityClassName)
      .default([])
      .describe(
        "PriorityClasses any environment's pods may name (rule `template.priority-class`); unset, a sandbox pod names none and takes the cluster's default. List only classes no higher than every environment's pods': the scheduler preempts lower-priority pods, another environment's included, to place a pod of a higher one.",
      ),
    os: z.string().min(1).default('linux').describe('Owned kubernetes.io/os scheduling value.'),
    arch: z.string().min(1).optional().describe('Owned kubernetes.io/arch scheduling value; unset: not owned.'),
  })
  .strict();

/** Principals that legitimately update or delete any managed object: the cluster's own controllers. */
export const DEFAULT_SYSTEM_PRINCIPALS = {
  users: [
    'system:serviceaccount:kube-system:generic-garbage-collector',
    'system:serviceaccount:kube-system:namespace-controller',
    'system:serviceaccount:kube-system:pod-garbage-collector',
    'system:serviceaccount:kube-system:node-controller',
    'system:serviceaccount:kube-system:taint-eviction-controller',
    'system:kube-scheduler',
    // The controller manager's own identity, where it runs without --use-service-account-credentials.
    'system:kube-controller-manager',
  ],
  groups: ['system:nodes'],
};

/**
 * The workload controllers whose creations are judged as their owner's environment
 * (docs/security-model.md, "Controller doors"): kube-system's service accounts of the
 * controllers that make pods, ReplicaSets and Jobs from a workload's template, and a pod's
 * ResourceClaims from the templates it names. They act under these names when the controller manager runs with --use-service-account-credentials
 * (kubeadm's and the managed offerings' default); without it they all act as
 * system:kube-controller-manager, a system principal, and their creations go unjudged.
 */
export const DEFAULT_WORKLOAD_CONTROLLERS: readonly string[] = [
  'system:serviceaccount:kube-system:replicaset-controller',
  'system:serviceaccount:kube-system:replication-controller',
  'system:serviceaccount:kube-system:statefulset-controller',
  'system:serviceaccount:kube-system:daemon-set-controller',
  'system:serviceaccount:kube-system:job-controller',
  'system:serviceaccount:kube-system:cronjob-controller',
  'system:serviceaccount:kube-system:deployment-controller',
  // A pod's ResourceClaim, made from the ResourceClaimTemplate it names: the pod's environment's
  // devices, which another pod may share once nothing stamped says whose they are.
  'system:serviceaccount:kube-system:resource-claim-controller',
];

/**
 * Break-glass by default: cluster administrators (system:masters bypasses RBAC and can remove
 * the webhooks anyway), so an admin deleting a sandbox pod is not refused by surprise; every
 * such use is logged and counted (src/admission/break-glass.ts).
 */
export const DEFAULT_BREAK_GLASS_GROUPS: readonly string[] = ['system:masters'];

export const configSchema = z
  .object({
    labelPrefix: dnsSubdomain.default('deed.dev').describe('Prefix of every Deed label and annotation key.'),
    environments: z
      .array(environmentSchema)
      .default([])
      .describe('Environments and the principals that act for each. A principal that matches none acts for no environment.'),
    deadline: z
      .object({
        marginSeconds: z
          .number()
          .int()
          .min(0)
          .max(31_536_000)
          .default(1800)
          .describe('Seconds added to a client budget (`<prefix>/max-duration-seconds`).'),
        capSeconds: z
          .number()
          .int()
          .positive()
          .max(31_536_000)
          .optional()
          .describe('Upper bound on any deadline; also the deadline of objects that declare no budget. Unset: no cap.'),
      })
      .strict()
      .default({ marginSeconds: 1800 })
      .describe('Deadline margins and caps.'),
    reaper: z
      .object({
        deadlineGraceSeconds: z
          .number()
          .int()
          .min(0)
          .max(31_536_000)
          .default(900)
          .describe(
            'Seconds after an attested `<prefix>/expires-at` past which `deed reap` reaps the object even while its runner pod lives (a sandbox pod was failed at that deadline). Only objects with a deadline are concerned: no budget and no cap, no `expires-at`.',
          ),
        leaseGraceSeconds: z
          .number()
          .int()
          .min(0)
          .max(86_400)
          .default(300)
          .describe(
            "Seconds beyond a run lease's `leaseDurationSeconds` that it may go unrenewed before `deed reap` counts the run over (`<prefix>/run-lease`): room for clock skew and a renewer stalled by an API-server outage.",
          ),
        runLeases: z
          .boolean()
          .default(true)
          .describe(
            "Whether `deed reap` takes a run lease (`<prefix>/run-lease`) gone or unrenewed as the end of a run. Deed stamps a Lease for the environment that creates it, guards its renewals and its delete to that environment, and admits an object naming a run lease only when the Lease is its own environment's; off, a run lease is ignored and the owner and the deadline decide.",
          ),
      })
      .strict()
      .default({ deadlineGraceSeconds: 900, leaseGraceSeconds: 300, runLeases: true })
      .describe('When `deed reap` counts a run over though its runner pod lives.'),
    attestation: z
      .object({
        keyFile: z
          .string()
          .min(1)
          .optional()
          .describe(
            'The form before key rings: one file holding the HMAC key (at least 32 bytes), id `key`, signing in the `v1` format. Not with `keys`. Neither set: `deed serve` generates a key under its certificate directory.',
          ),
        keys: z
          .array(ringKeySchema)
          .min(1)
          .optional()
          .describe('The key ring: every key verifies, `signingKey` signs (format `v2:<id>:<mac>`). Rotation adds a key, makes it the signing key, then removes the old one (docs/operations.md).'),
        signingKey: keyId
          .optional()
          .describe('Id of the key in `keys` that signs new attestations. Required when `keys` holds more than one.'),
      })
      .strict()
      .default({})
      .describe('The keys that sign and verify `<prefix>/attestation`.'),
    breakGlass: z
      .object({
        users: z.array(z.string().min(1)).default([]).describe('Usernames allowed to update or delete any managed object.'),
        groups: z
          .array(z.string().min(1))
          .default([...DEFAULT_BREAK_GLASS_GROUPS])
          .describe('Groups allowed to update or delete any managed object. `[]` locks out cluster administrators too.'),
      })
      .strict()
      .default({ users: [], groups: [...DEFAULT_BREAK_GLASS_GROUPS] })
      .describe(
        'Principals that may act on managed objects of any environment (guarded writes). By default the group `system:masters`, which RBAC never restricts anyway: each review allowed only by break-glass is logged, counted (`deed_break_glass_reviews_total`) and named in an audit annotation and a warning.',
      ),
    platform: z
      .object({
        users: z.array(z.string().min(1)).default([]).describe('Usernames.'),
        groups: z.array(z.string().min(1)).default(['system:masters']).describe('Groups.'),
      })
      .strict()
      .default({ users: [], groups: ['system:masters'] })
      .describe(
        "Principals that, with break-glass, switch the review scope: add, change or remove a Namespace's opt-in label (`deed.dev/sandbox`), and change or delete Deed's webhook configurations; and own what acts on a whole opted-in namespace: delete it (also its bound environment's principals and managers), write its ResourceQuotas and LimitRanges (rule `guard.namespace-wide`; an environment may in its bound namespaces), give a Service `spec.externalIPs` (rule `service.external-ips`) and a Gateway `spec.addresses` (rule `gateway.addresses`). The scope switch and namespace deletion are enforced in the API server by the ValidatingAdmissionPolicies the install renders from this list (re-render and apply after changing it). Helm, Argo CD or whatever upgrades Deed must be one of them.",
      ),
    systemPrincipals: z
      .object({
        users: z.array(z.string().min(1)).default(DEFAULT_SYSTEM_PRINCIPALS.users),
        groups: z.array(z.string().min(1)).default(DEFAULT_SYSTEM_PRINCIPALS.groups),
      })
      .strict()
      .default(DEFAULT_SYSTEM_PRINCIPALS)
      .describe(
        'Cluster controllers allowed to update or delete managed objects though they act for no environment: the garbage collector, namespace controller, pod GC, node lifecycle and taint eviction, scheduler preemption, and kubelets (group system:nodes) finishing pod deletions.',
      ),
    workloadControllers: z
      .object({
        users: z.array(z.string().min(1)).default([...DEFAULT_WORKLOAD_CONTROLLERS]).describe('Usernames.'),
        perControllerCredentials: z
          .boolean()
          .default(true)
          .describe(
            "Whether kube-controller-manager runs with `--use-service-account-credentials` (kubeadm's and the managed offerings' default), so that each controller creates as its own service account (`users`) and Deed reviews what it creates: a controller-made pod of an environment then gets automount off like any sandbox pod, and a workload's template may leave `automountServiceAccountToken` unset. Set false where the controllers all act as `system:kube-controller-manager` (a system principal, whose creations Deed never sees): Deed then writes `automountServiceAccountToken: false` into an environment's pod templates itself (rule `template.service-account-token`).",
          ),
      })
      .strict()
      .default({ users: [...DEFAULT_WORKLOAD_CONTROLLERS], perControllerCredentials: true })
      .describe(
        "Controllers that create pods, ReplicaSets and Jobs for a workload's owner (and the resourceclaim controller a pod's ResourceClaims, from the templates it names), and operators that make Secrets for the resources they reconcile (cert-manager's controller for Certificates, the External Secrets operator for ExternalSecrets). What they create is judged when it is created, as an object of the environment of its controlling owner (read from that owner's stamps; cert-manager names its Certificate so with `--enable-certificate-owner-ref`), and stamped as that environment's; a change of an object's controlling owner reference (adoption) by anyone must stay within one environment. List a workload controller that runs outside kube-system, and those operators, here; re-render the install after changing it (the webhooks' matchConditions send these controllers' creations to Deed).",
      ),
    rules: z
      .record(z.string(), enforcementMode)
      .default({})
      .describe('Enforcement mode per rule id (`deny`, `warn`, `audit`); see docs/rules.md. Integrity rules cannot be relaxed.'),
    template: templateSchema
      .default(templateSchema.parse({}))
      .describe('The platform-owned fields of sandbox pods.'),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    // The rule ids of `rules` are checked against the catalogue by config/rule-modes.ts: the
    // catalogue gathers rule files that read this schema's types, so it cannot be imported here.
    const { keyFile, keys, signingKey } = cfg.attestation;
    if (keyFile !== undefined && keys !== undefined)
      ctx.addIssue({ code: 'custom', path: ['attestation', 'keyFile'], message: 'give either keyFile (one key) or keys (a ring), not both; keyFile is the ring [{id: key, file: ...}]' });
    if (keys === undefined && signingKey !== undefined) ctx.addIssue({ code: 'custom', path: ['attestation', 'signingKey'], message: 'names a key of attestation.keys, which is not set' });
    if (keys !== undefined) {
      const ids = new Set<string>();
      keys.forEach((k, i) => {
        if (ids.has(k.id)) ctx.addIssue({ code: 'custom', path: ['attestation', 'keys', i, 'id'], message: `duplicate key id "${k.id}"` });
        ids.add(k.id);
      });
      if (signingKey === undefined && keys.length > 1)
        ctx.addIssue({ code: 'custom', path: ['attestation', 'signingKey'], message: `must name the key that signs (one of ${[...ids].join(', ')})` });
      if (signingKey !== undefined && !ids.has(signingKey))
        ctx.addIssue({ code: 'custom', path: ['attestation', 'signingKey'], message: `"${signingKey}" is not in attestation.keys (${[...ids].join(', ')})` });
    }
    const seen = new Set<string>();
    cfg.environments.forEach((env, i) => {
      if (seen.has(env.id)) ctx.addIssue({ code: 'custom', path: ['environments', i, 'id'], message: `duplicate environment id "${env.id}"` });
      seen.add(env.id);
    });
    const ids = new Set(cfg.environments.map((env) => env.id));
    cfg.environments.forEach((env, i) =>
      env.claimsFrom.forEach((other, j) => {
        if (!ids.has(other)) ctx.addIssue({ code: 'custom', path: ['environments', i, 'claimsFrom', j], message: `unknown environment "${other}"` });
        else if (other === env.id) ctx.addIssue({ code: 'custom', path: ['environments', i, 'claimsFrom', j], message: 'an environment always mounts its own claims; do not list it' });
      }),
    );
    // A hostname two environments declare would be neither's alone.
    cfg.environments.forEach((env, i) =>
      env.hostnames.forEach((host, j) => {
        const other = cfg.environments.find((e, k) => k !== i && e.hostnames.some((h) => hostnamesOverlap(h, host)));
        if (other !== undefined) ctx.addIssue({ code: 'custom', path: ['environments', i, 'hostnames', j], message: `overlaps environment "${other.id}"'s hostnames: a hostname is one environment's alone` });
      }),
    );
    // A namespace bound to two environments would admit neither's creates unambiguously.
    const binders = new Map<string, string>();
    cfg.environments.forEach((env, i) =>
      env.namespaces.forEach((ns, j) => {
        const prior = binders.get(ns);
        if (prior !== undefined && prior !== env.id)
          ctx.addIssue({ code: 'custom', path: ['environments', i, 'namespaces', j], message: `namespace "${ns}" is already bound to environment "${prior}"` });
        binders.set(ns, env.id);
      }),
    );
    // Whose a service account is, and so whose its pods and tokens are, is read from
    // serviceAccounts alone (requester/identity.ts serviceAccountEnvironment): the guards on
    // runner pods, their accounts and their tokens ask that. A group the API server gives
    // service accounts would make their tokens act for an environment whose runners and
    // accounts no guard knows as its own.
    cfg.environments.forEach((env, i) =>
      env.groups.forEach((group, j) => {
        const path = ['environments', i, 'groups', j];
        if (group.startsWith(SA_NAMESPACE_GROUP))
          ctx.addIssue({ code: 'custom', path, message: `maps the service accounts of namespace "${group.slice(SA_NAMESPACE_GROUP.length)}" by group: write serviceAccounts: ["${group.slice(SA_NAMESPACE_GROUP.length)}:*"] instead (an environment's runner pods, accounts and tokens are guarded as its own only when serviceAccounts maps them)` });
        else if (CATCH_ALL_GROUPS.includes(group) && cfg.environments.length > 1)
          ctx.addIssue({ code: 'custom', path, message: `"${group}" maps every service account${group === 'system:authenticated' ? ' and every user' : ''} to "${env.id}", which makes every other environment's principals ambiguous: only a policy of one environment may; map each environment's accounts with serviceAccounts` });
      }),
    );
    // One service-account pattern in two environments would make the stamp ambiguous.
    const owners = new Map<string, string>();
    cfg.environments.forEach((env, i) =>
      env.serviceAccounts.forEach((sa, j) => {
        const prior = owners.get(sa);
        if (prior !== undefined && prior !== env.id)
          ctx.addIssue({ code: 'custom', path: ['environments', i, 'serviceAccounts', j], message: `"${sa}" already acts for environment "${prior}"` });
        owners.set(sa, env.id);
      }),
    );
  });

/** The group the API server gives every service account of one namespace (`system:serviceaccounts:NS`). */
const SA_NAMESPACE_GROUP = 'system:serviceaccounts:';
/** Groups every service account carries: a mapping by them is the one environment of the embedded default. */
const CATCH_ALL_GROUPS = ['system:serviceaccounts', 'system:authenticated'];

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;
export type { EnforcementMode } from '../policy/rules/rule-info.js';

// Template collisions (docs/concepts.md, "The validating webhook"): every platform-owned field of
// a sandbox pod is absent (the platform fills it) or equal to the owned value.
// Privileged and host settings that do not collide are allowed, with a warning.
import { isDeepStrictEqual } from 'node:util';
import { quoted, type Finding } from '../../admission/verdict.js';
import type { Config } from '../../config/schema.js';
import { containers, fileKeyReads, mainContainerOf, mounts, volumeSource } from './spec.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';
import { API_CLIENT_POD_SIGNER, apiClientCertificateVolumes, isPluginTokenVolume, tokenSources } from './service-account-token.js';
import { rule } from '../rules/rule-info.js';
import type { Rule } from '../rules/rule.js';
import type { PodSpecSubject } from './pod-spec-subject.js';

/** The catalogue entries of the platform-owned fields of a pod spec (rules/catalog.ts gathers them). */
export const TEMPLATE_COLLISION_RULES = {
  templateMainMissing: rule({
    id: 'template.main-missing',
    webhook: 'validate',
    checks:
      'A pod that uses what the platform gives a sandbox\'s main container alone (the runtime or auth volume, reserved environment variables, the control port) has the designated main container. A pod without one that uses none of them is ordinary software sharing the namespace (a Helm test hook, a Deployment\'s pods), not a sandbox: nothing is reported.',
    defaultMode: 'warn',
    overridable: true,
    example: 'no container named "main", yet the pod uses the runtime volume, which only a sandbox\'s main container gets; name that container "main"',
  }),
  templateMainContainer: rule({
    id: 'template.main-container',
    webhook: 'validate',
    checks: 'The main container\'s command, args, workingDir and control port are absent or equal to the owned values.',
    defaultMode: 'deny',
    overridable: true,
    example: 'is platform-owned: expected ["/opt/agentctl","serve"], got ["sh"]',
  }),
  templateReservedEnv: rule({
    id: 'template.reserved-env',
    webhook: 'validate',
    checks:
      "Reserved environment variables (names and prefixes) appear only on the main container; no envFrom prefix can make a reserved name (it falls into a reserved prefix, or a reserved name or prefix starts with it). In a sandbox pod (one with the designated main container) every other container's envFrom has a prefix: without one, the keys of the Secret or ConfigMap become variables unseen, a reserved one included, and keys can be added after the pod is admitted.",
    defaultMode: 'deny',
    overridable: true,
    example: 'DEED_SESSION_ID is reserved for the main container',
  }),
  templateReservedVolume: rule({
    id: 'template.reserved-volume',
    webhook: 'validate',
    checks: 'A volume that uses a reserved name (workspace, runtime, auth) has the owned source.',
    defaultMode: 'deny',
    overridable: true,
    example: 'volume "runtime" is platform-owned: expected source emptyDir, got hostPath',
  }),
  templateReservedMount: rule({
    id: 'template.reserved-mount',
    webhook: 'validate',
    checks: 'The runtime and auth volumes are mounted only by the main container, at their owned paths; no other container reads a variable from them either (`env[].valueFrom.fileKeyRef`, which the kubelet resolves without a mount).',
    defaultMode: 'deny',
    overridable: true,
    example: 'only the main container may mount the runtime volume',
  }),
  templateRestartPolicy: rule({
    id: 'template.restart-policy',
    webhook: 'validate',
    checks:
      "A sandbox pod's spec.restartPolicy (a pod with the designated main container, or a workload template with one) is absent or the owned value, and so is its main container's own `restartPolicy`, which overrides the pod's (ContainerRestartRules); the main container carries no `restartPolicyRules`. Other containers' are not judged: an init container's `restartPolicy: Always` makes it a native sidecar. A pod without a main container is not a sandbox and chooses its own (a Helm test hook's `Never`), as a Job's pods do; so does a kind that decides its pods' restartPolicy (Job, CronJob).",
    defaultMode: 'deny',
    overridable: true,
    example: 'is platform-owned: expected "Always", got "Never"',
  }),
  templateServiceAccountToken: rule({
    id: 'template.service-account-token',
    webhook: 'validate',
    checks:
      'A pod\'s and a workload pod template\'s spec.automountServiceAccountToken is absent or the owned value: Deed sets it off in a pod that leaves it unset (and takes out the token the API server mounted), a pod a workload controller makes included, since Deed reviews what the controllers in `workloadControllers.users` create. Where the controller manager runs without per-controller credentials (`workloadControllers.perControllerCredentials: false`: its pods are created unreviewed), Deed writes `automountServiceAccountToken: false` into an environment\'s pod templates when they are written, and refuses a template still without it. In both, no volume hands a container a service-account token: a projected `serviceAccountToken` source is allowed only with an audience listed in `template.tokenAudiences` (and the API server\'s own token volume only when the owned value is true), and a projected `podCertificate` from the API server\'s client signer (`kubernetes.io/kube-apiserver-client-pod`, a client certificate of the pod\'s service account) not at all.',
    defaultMode: 'deny',
    overridable: true,
    example: 'volume "tok" projects a service-account token for the API server (no audience) into containers main, sidecar',
  }),
  templateScheduling: rule({
    id: 'template.scheduling',
    webhook: 'validate',
    checks: 'kubernetes.io/os (and kubernetes.io/arch when the policy sets it) in nodeSelector or required node affinity, and spec.os.name, is absent or the owned value (in node affinity, `In` the owned value alone, or `NotIn` values that leave it out, as charts write `kubernetes.io/os NotIn [windows]`).',
    defaultMode: 'deny',
    overridable: true,
    example: 'is platform-owned: expected "linux", got "windows"',
  }),
  templatePrivileged: rule({
    id: 'template.privileged',
    webhook: 'validate',
    checks: 'Privileged containers or added capabilities are allowed but flagged.',
    defaultMode: 'warn',
    overridable: true,
    example: 'container "dbg" is privileged',
  }),
  templateHostAccess: rule({
    id: 'template.host-access',
    webhook: 'validate',
    checks:
      "The host PID and IPC namespaces and hostPath volumes are allowed but flagged: Pod Security (`baseline` or `restricted` on the opted-in namespaces) is what refuses them; set this rule to `deny` where it is not enforced. Host networking is `template.host-network`'s, a grant.",
    defaultMode: 'warn',
    overridable: true,
    example: 'uses the host pid namespace',
  }),
} as const;


const OS_LABEL = 'kubernetes.io/os';
const ARCH_LABEL = 'kubernetes.io/arch';

/** `fix`: what to do instead, where the expected value alone does not say it. */
function owned(rule: string, path: string, expected: unknown, got: unknown, fix?: string): Finding {
  return { rule, path, message: `is platform-owned: expected ${JSON.stringify(expected)}, got ${quoted(got)}${fix === undefined ? '' : `; ${fix}`}` };
}

export function templateCollisions(spec: Rec, at: string, config: Config): Finding[] {
  const t = config.template;
  const findings: Finding[] = [];
  const all = containers(spec, at);
  const main = mainContainerOf(all, t.mainContainer);

  // A pod without the designated main container is not a sandbox: ordinary software (a Helm
  // test hook, a Deployment's pods) that shares the namespace. Its restartPolicy is its own,
  // and its missing main container is worth a warning only where it uses what the platform
  // gives a sandbox's main container alone: then it is a sandbox whose main is misnamed.
  if (main === undefined) {
    const uses = sandboxFacilities(spec, all, config);
    if (uses.length > 0)
      findings.push({
        rule: TEMPLATE_COLLISION_RULES.templateMainMissing.id,
        path: `${at}.containers`,
        message: `no container named "${t.mainContainer}", yet the pod uses ${uses.join(', ')}, which only a sandbox's main container gets; name that container "${t.mainContainer}"`,
      });
  } else {
    for (const key of ['command', 'args', 'workingDir'] as const) {
      const want = t[key];
      const got = field(main.spec, key);
      if (want !== undefined && got !== undefined && !isDeepStrictEqual(got, want)) findings.push(owned(TEMPLATE_COLLISION_RULES.templateMainContainer.id, `${main.path}.${key}`, want, got));
    }
  }

  if (t.controlPort !== undefined) {
    const { name, containerPort } = t.controlPort;
    for (const c of all)
      for (const port of recs(field(c.spec, 'ports'))) {
        const portName = text(port, 'name');
        const number = field(port, 'containerPort');
        const isMain = c === main;
        if (isMain && portName === name && number !== containerPort)
          findings.push(owned(TEMPLATE_COLLISION_RULES.templateMainContainer.id, `${c.path}.ports[name=${name}].containerPort`, containerPort, number));
        else if (!isMain && (number === containerPort || portName === name))
          findings.push({ rule: TEMPLATE_COLLISION_RULES.templateMainContainer.id, path: `${c.path}.ports`, message: `port ${containerPort} ("${name}") is the main container's control port` });
      }
  }

  const reserved = (key: string) => t.reservedEnv.names.includes(key) || t.reservedEnv.prefixes.some((p) => key.startsWith(p));
  const anyReserved = t.reservedEnv.names.length > 0 || t.reservedEnv.prefixes.length > 0;
  for (const c of all) {
    if (c === main) continue;
    for (const env of recs(field(c.spec, 'env'))) {
      const name = text(env, 'name') ?? '';
      if (reserved(name)) findings.push({ rule: TEMPLATE_COLLISION_RULES.templateReservedEnv.id, path: `${c.path}.env[name=${name}]`, message: `${name} is reserved for the main container` });
    }
    // Unprefixed sources are one finding per container, naming the first: a container of
    // thousands would otherwise cost a message each (rev-83's pod of 50,000 took ~50 ms here).
    let unprefixed: { from: Rec; i: number; more: number } | undefined;
    recs(field(c.spec, 'envFrom')).forEach((from, i) => {
      const prefix = text(from, 'prefix') ?? '';
      // Prefix + key makes the name: a prefix that a reserved name or prefix starts with can complete it.
      if (prefix !== '' && (reserved(prefix) || [...t.reservedEnv.prefixes, ...t.reservedEnv.names].some((p) => p.startsWith(prefix))))
        findings.push({ rule: TEMPLATE_COLLISION_RULES.templateReservedEnv.id, path: `${c.path}.envFrom[prefix=${prefix}]`, message: `envFrom prefix "${prefix}" reaches reserved environment keys` });
      // Without a prefix the source's keys are the names: unseen here (Deed does not read a
      // Secret's data) and changeable after admission. Judged in a sandbox pod only: an
      // ordinary chart's envFrom of its own ConfigMap has no reserved variable to forge.
      else if (prefix === '' && main !== undefined && anyReserved) {
        if (unprefixed === undefined) unprefixed = { from, i, more: 0 };
        else unprefixed.more++;
      }
    });
    if (unprefixed !== undefined) {
      const others = unprefixed.more === 0 ? '' : ` (and ${unprefixed.more} more sources without a prefix)`;
      findings.push({
        rule: TEMPLATE_COLLISION_RULES.templateReservedEnv.id,
        path: `${c.path}.envFrom[${unprefixed.i}]`,
        message: `container "${c.name}" takes every key of ${envSource(unprefixed.from)}${others} as a variable without a prefix, so it could be given a reserved one (${[...t.reservedEnv.names, ...t.reservedEnv.prefixes.map((p) => `${p}*`)].join(', ')}); set a prefix no reserved name or prefix starts with (say "APP_"), or name the keys in env`,
      });
    }
  }

  const volumes = t.volumes;
  for (const v of recs(field(spec, 'volumes'))) {
    const name = text(v, 'name');
    const def = name === volumes.workspace.name ? volumes.workspace : name === volumes.runtime.name ? volumes.runtime : name === volumes.auth.name ? volumes.auth : undefined;
    const source = volumeSource(v);
    if (def !== undefined && source !== def.source)
      findings.push({ rule: TEMPLATE_COLLISION_RULES.templateReservedVolume.id, path: `${at}.volumes[name=${name}]`, message: `volume "${name}" is platform-owned: expected source ${def.source}, got ${source ?? 'none'}` });
    if (source === 'hostPath') findings.push({ rule: TEMPLATE_COLLISION_RULES.templateHostAccess.id, path: `${at}.volumes[name=${name}]`, message: `volume "${name}" is a hostPath` });
  }
  for (const c of all.filter((x) => x.list === 'containers'))
    for (const m of mounts(c))
      for (const def of [volumes.runtime, volumes.auth]) {
        if (m.name !== def.name) continue;
        if (c !== main) findings.push({ rule: TEMPLATE_COLLISION_RULES.templateReservedMount.id, path: m.path, message: `only the main container may mount the ${def.name} volume` });
        else if (m.givenPath !== def.mountPath) findings.push(owned(TEMPLATE_COLLISION_RULES.templateReservedMount.id, `${m.path}.mountPath`, def.mountPath, m.givenPath));
      }
  // A variable read from a file of the volume (fileKeyRef) reaches it without a mount.
  for (const c of all.filter((x) => x.list === 'containers' && x !== main))
    for (const r of fileKeyReads(c))
      for (const def of [volumes.runtime, volumes.auth])
        if (r.name === def.name) findings.push({ rule: TEMPLATE_COLLISION_RULES.templateReservedMount.id, path: r.path, message: `only the main container may read the ${def.name} volume (here a variable's value, through fileKeyRef)` });

  const restartPolicy = field(spec, 'restartPolicy');
  if (main !== undefined && restartPolicy !== undefined && restartPolicy !== t.restartPolicy) findings.push(owned(TEMPLATE_COLLISION_RULES.templateRestartPolicy.id, `${at}.restartPolicy`, t.restartPolicy, restartPolicy));
  if (main !== undefined) {
    // A container's own restartPolicy and rules (ContainerRestartRules) override the pod's for it.
    const own = field(main.spec, 'restartPolicy');
    if (own !== undefined && own !== t.restartPolicy)
      findings.push(owned(TEMPLATE_COLLISION_RULES.templateRestartPolicy.id, `${main.path}.restartPolicy`, t.restartPolicy, own, 'leave it unset: the main container restarts as the pod does'));
    const rules = field(main.spec, 'restartPolicyRules');
    if (rules !== undefined && !(Array.isArray(rules) && rules.length === 0))
      findings.push({
        rule: TEMPLATE_COLLISION_RULES.templateRestartPolicy.id,
        path: `${main.path}.restartPolicyRules`,
        message: `is platform-owned: the main container restarts as spec.restartPolicy ${JSON.stringify(t.restartPolicy)} says; leave restartPolicyRules out`,
      });
  }
  const automount = field(spec, 'automountServiceAccountToken');
  if (automount !== undefined && automount !== t.automountServiceAccountToken)
    // Software that needs the API (a controller, an exporter) is the platform's to install.
    findings.push(
      owned(TEMPLATE_COLLISION_RULES.templateServiceAccountToken.id, `${at}.automountServiceAccountToken`, t.automountServiceAccountToken, automount,
        'leave it unset (Deed turns the token off), or have software that needs the API server installed by a principal of no environment (a platform deployer)'),
    );
  findings.push(...tokenVolumes(spec, at, all, config));

  findings.push(...scheduling(spec, at, OS_LABEL, t.os));
  // spec.os.name is the same choice as the label (the API server checks it against the node's).
  const os = field(spec, 'os');
  const osName = isRec(os) ? field(os, 'name') : undefined;
  if (osName !== undefined && osName !== t.os) findings.push(owned(TEMPLATE_COLLISION_RULES.templateScheduling.id, `${at}.os.name`, t.os, osName));
  if (t.arch !== undefined) findings.push(...scheduling(spec, at, ARCH_LABEL, t.arch));

  // Host networking is a grant, judged by template.host-network alone: were it flagged here too,
  // a policy that denies this rule to refuse the host PID namespace would refuse a granted one.
  for (const key of ['hostPID', 'hostIPC'])
    if (field(spec, key) === true) findings.push({ rule: TEMPLATE_COLLISION_RULES.templateHostAccess.id, path: `${at}.${key}`, message: `uses the host ${key.slice(4).toLowerCase()} namespace` });
  for (const c of all) {
    const sc = field(c.spec, 'securityContext');
    if (!isRec(sc)) continue;
    if (field(sc, 'privileged') === true) findings.push({ rule: TEMPLATE_COLLISION_RULES.templatePrivileged.id, path: `${c.path}.securityContext.privileged`, message: `container "${c.name}" is privileged` });
    const caps = field(sc, 'capabilities');
    const added = isRec(caps) ? field(caps, 'add') : undefined;
    if (Array.isArray(added) && added.length > 0)
      findings.push({ rule: TEMPLATE_COLLISION_RULES.templatePrivileged.id, path: `${c.path}.securityContext.capabilities.add`, message: `container "${c.name}" adds ${added.map(String).join(',')}` });
  }
  return findings;
}

/** An envFrom entry's source, for a message, by its field: `secretRef "x"`, `configMapRef "y"`. */
function envSource(from: Rec): string {
  for (const key of ENV_FROM_SOURCES) {
    const ref = field(from, key);
    if (isRec(ref)) return `${key} ${quoted(text(ref, 'name') ?? '')}`;
  }
  return 'its source';
}

/** The fields an envFrom entry takes its keys from. */
const ENV_FROM_SOURCES = ['secretRef', 'configMapRef'] as const;

/**
 * What of the platform's, given to a sandbox's main container alone, a pod uses: the runtime
 * and auth volumes (by their reserved names), reserved environment keys, the control port.
 * The workspace is not among them: it is granted to other containers too, and "workspace"
 * is a common volume name.
 */
function sandboxFacilities(spec: Rec, all: ReturnType<typeof containers>, config: Config): string[] {
  const t = config.template;
  const uses: string[] = [];
  const volumes = new Set(recs(field(spec, 'volumes')).map((v) => text(v, 'name')));
  for (const def of [t.volumes.runtime, t.volumes.auth]) if (volumes.has(def.name)) uses.push(`the ${def.name} volume`);
  const reserved = (key: string) => t.reservedEnv.names.includes(key) || t.reservedEnv.prefixes.some((p) => key.startsWith(p));
  if (all.some((c) => recs(field(c.spec, 'env')).some((e) => reserved(text(e, 'name') ?? '')))) uses.push('reserved environment variables');
  const port = t.controlPort;
  if (port !== undefined && all.some((c) => recs(field(c.spec, 'ports')).some((p) => text(p, 'name') === port.name || field(p, 'containerPort') === port.containerPort)))
    uses.push(`the control port ${port.containerPort}`);
  return uses;
}

/**
 * Volumes that hand a container a service-account token. A projected token without an
 * audience is one the API server accepts: it acts for the pod's service account (for a
 * runner's, the whole environment). One for an audience the policy lists (an external
 * service that validates it) is allowed. The ServiceAccount plugin's own volume is the
 * platform's to allow, by owning automount as true. Secret volumes are not judged: whether
 * a Secret holds a legacy token needs the Secret, which Deed does not read.
 */
function tokenVolumes(spec: Rec, at: string, all: ReturnType<typeof containers>, config: Config): Finding[] {
  const t = config.template;
  const allowedVolumes = new Set(t.automountServiceAccountToken ? recs(field(spec, 'volumes')).filter(isPluginTokenVolume).map((v) => text(v, 'name')) : []);
  const findings: Finding[] = [];
  // Which containers mount each volume, worked out once: per source it made the work the product of sources and mounts.
  let mountedBy: Map<string, string[]> | undefined;
  const into = (volume: string) => {
    const users = (mountedBy ??= containersByVolume(all)).get(volume) ?? [];
    return users.length > 0 ? `into containers ${users.join(', ')}` : 'mounted by no container';
  };
  for (const source of tokenSources(spec)) {
    if (allowedVolumes.has(source.volume)) continue;
    if (source.audience !== undefined && t.tokenAudiences.includes(source.audience)) continue;
    const who = into(source.volume);
    const audience = source.audience === undefined ? 'for the API server (no audience)' : `for audience ${JSON.stringify(source.audience)}, not in template.tokenAudiences`;
    findings.push({
      rule: TEMPLATE_COLLISION_RULES.templateServiceAccountToken.id,
      path: `${at}.volumes[name=${source.volume}].projected.sources.serviceAccountToken`,
      message: `volume "${source.volume}" projects a service-account token ${audience} ${who}`,
    });
  }
  // A pod certificate the kubelet asks the API server's client signer for is a client
  // certificate of the pod's service account: a credential the API server accepts, as a token.
  for (const volume of apiClientCertificateVolumes(spec))
    findings.push({
      rule: TEMPLATE_COLLISION_RULES.templateServiceAccountToken.id,
      path: `${at}.volumes[name=${volume}].projected.sources.podCertificate`,
      message: `volume "${volume}" projects a certificate from signer ${API_CLIENT_POD_SIGNER}, a client credential of the pod's service account for the API server, ${into(volume)}`,
    });
  return findings;
}

/** The names of the containers that mount each volume, in container order, each once. */
function containersByVolume(all: ReturnType<typeof containers>): Map<string, string[]> {
  const byVolume = new Map<string, string[]>();
  for (const c of all)
    for (const volume of new Set(mounts(c).map((m) => m.name))) {
      const users = byVolume.get(volume);
      if (users === undefined) byVolume.set(volume, [c.name]);
      else users.push(c.name);
    }
  return byVolume;
}

/** The owned scheduling label, in nodeSelector and in required node affinity. */
function scheduling(spec: Rec, at: string, label: string, want: string): Finding[] {
  const findings: Finding[] = [];
  const selector = field(spec, 'nodeSelector');
  const got = isRec(selector) ? field(selector, label) : undefined;
  if (got !== undefined && got !== want) findings.push(owned(TEMPLATE_COLLISION_RULES.templateScheduling.id, `${at}.nodeSelector["${label}"]`, want, got));
  const affinity = field(spec, 'affinity');
  const nodeAffinity = isRec(affinity) ? field(affinity, 'nodeAffinity') : undefined;
  const required = isRec(nodeAffinity) ? field(nodeAffinity, 'requiredDuringSchedulingIgnoredDuringExecution') : undefined;
  const terms = isRec(required) ? recs(field(required, 'nodeSelectorTerms')) : [];
  for (const term of terms)
    for (const expr of recs(field(term, 'matchExpressions'))) {
      if (text(expr, 'key') !== label) continue;
      const values = field(expr, 'values');
      // `NotIn` values without the owned one keeps the pod off the others' nodes only (charts' `kubernetes.io/os NotIn [windows]`).
      const keepsOff = text(expr, 'operator') === 'NotIn' && Array.isArray(values) && values.length > 0 && !values.includes(want);
      if (!keepsOff && (text(expr, 'operator') !== 'In' || !isDeepStrictEqual(values, [want])))
        findings.push(owned(TEMPLATE_COLLISION_RULES.templateScheduling.id, `${at}.affinity.nodeAffinity.required[key=${label}]`, { operator: 'In', values: [want] }, { operator: field(expr, 'operator'), values }));
    }
  return findings;
}

/** Platform-owned fields are absent or equal to the owned value; a kind that decides its pods' restartPolicy keeps it. */
export const templateCollisionRule: Rule<PodSpecSubject> = {
  info: Object.values(TEMPLATE_COLLISION_RULES),
  check: ({ spec, at, source }, { policy }) =>
    templateCollisions(spec, at, policy.config).filter((f) => !(source.ownsRestartPolicy && f.rule === TEMPLATE_COLLISION_RULES.templateRestartPolicy.id)),
};

/**
 * Whether Deed writes `automountServiceAccountToken: false` into a workload's pod template
 * (at CREATE, and on an UPDATE that changes the template): only where the controller
 * manager runs without per-controller credentials (policy
 * `workloadControllers.perControllerCredentials: false`). Its controllers then all create as
 * `system:kube-controller-manager`, a system principal Deed never judges, so the pods they
 * make get no mutation and "automount off" must be in the template they copy. With
 * per-controller credentials (the default) each pod is reviewed when its controller makes
 * it, and the mutating side turns automount off there (mutate.ts), as for any sandbox pod.
 */
export function templateAutomountOff(spec: Rec, config: Config): boolean {
  return !config.workloadControllers.perControllerCredentials && !config.template.automountServiceAccountToken && field(spec, 'automountServiceAccountToken') === undefined;
}

/**
 * The same, on the validating side: a template the mutating side should have made say false
 * and that still leaves it unset (a later mutator took it out). Never fires with
 * per-controller credentials: a template may leave the field unset.
 */
export const controllerTokenRule: Rule<PodSpecSubject> = {
  info: [TEMPLATE_COLLISION_RULES.templateServiceAccountToken],
  check: ({ spec, at, source }, { policy }) =>
    source.controller && templateAutomountOff(spec, policy.config)
      ? [
          {
            rule: TEMPLATE_COLLISION_RULES.templateServiceAccountToken.id,
            path: `${at}.automountServiceAccountToken`,
            message: `must be false: the controller manager runs without per-controller credentials (workloadControllers.perControllerCredentials: false), so the ${source.kind}'s pods are created unreviewed; Deed writes false here when the template is written`,
          },
        ]
      : [],
};

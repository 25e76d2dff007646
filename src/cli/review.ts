// `deed review`: the offline policy dry-run. Builds the AdmissionReview the API server
// would send for each object and runs the webhooks on it in process, through the same
// decide() as the server; or replays a captured AdmissionReview. Objects or patches go
// to stdout, the report (warnings, denials with rule ids) to stderr.
// Exit status: 0 all allowed, 1 any denied, 2 a usage or input error.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { stringify } from 'yaml';
import { decide } from '../admission/decide.js';
import type { KubeObject } from '../admission/types.js';
import { loadConfig } from '../config/load.js';
import { productionContext } from '../admission/production-context.js';
import { singleKeyRing, type KeyRing } from '../policy/stamps/key-ring.js';
import { dryRunRing } from '../review/dry-run-key.js';
import { loadKeyRing, readAttestationKey } from '../server/attestation-key.js';
import { forCreate, forUpdate, InputError, placeInNamespace, requesterFor, stored, withServiceAccountToken, type ReviewOperation } from '../review/build-review.js';
import { readObjects, type SourcedObject } from '../review/read-objects.js';
import { patchLine, patchTarget, requestTarget } from '../review/patch-line.js';
import { replaySummary, reportObject, reportReplay, reportSummary } from '../review/report.js';
import { hasWebhook, ReviewedObjects, reviewObject, type ObjectInput, type ObjectReview } from '../review/run.js';
import type { DecisionContext, ObjectLookup } from '../policy/policy.js';
import { collect, deedNamespaceOption, describeFileError, expandFiles, outputOption, parseNamespace } from './options.js';
import { DEFAULT_NAMESPACE } from '../install/manifests.js';
import { jsonProblem } from '../errors/file-errors.js';

export { DRY_RUN_KEY, DRY_RUN_KEY_ID, dryRunRing } from '../review/dry-run-key.js';

type Output = 'yaml' | 'json' | 'patch';

interface ReviewFlags {
  filename?: string[];
  recursive: boolean;
  review?: string[];
  webhook?: string;
  operation: ReviewOperation;
  old?: string;
  existing?: string;
  deedNamespace: string;
  as?: string;
  asGroup: string[];
  podName?: string;
  podUid?: string;
  subresource?: string;
  namespace?: string;
  config?: string;
  attestationKey?: string;
  policyKeys?: boolean;
  output: Output;
}

function parseOperation(value: string): ReviewOperation {
  const op = value.toUpperCase();
  if (op !== 'CREATE' && op !== 'UPDATE' && op !== 'DELETE') throw new InvalidArgumentError('must be CREATE, UPDATE or DELETE');
  return op;
}

export function registerReview(program: Command): void {
  program
    .command('review')
    .description('Dry-run the policy offline: run the webhooks on objects from files, as the API server would call them')
    .option('-f, --filename <file>', 'objects to review: YAML or JSON, several documents or a List, or a directory of such files; - reads stdin (repeatable)', collect)
    .option('-R, --recursive', "with -f DIR, also the files of its subdirectories (kubectl's -R)", false)
    .option('--review <file...>', 'replay captured AdmissionReviews (JSON) instead; - reads stdin')
    .addOption(
      new Option('--webhook <name>', 'webhook to replay --review through (default: from each file name, admit-*, mutate-* or validate-*); the installed mutating webhook calls admit, which stamps and judges a CREATE whole, where mutate only stamps').choices([
        'admit',
        'mutate',
        'validate',
      ]),
    )
    .option('--operation <op>', 'CREATE, UPDATE or DELETE', parseOperation, 'CREATE' as ReviewOperation)
    .option('--old <file>', 'the stored object(s): required for UPDATE (paired with -f in order); for DELETE, instead of -f')
    .option('--existing <file>', 'objects already stored in the cluster, with their Namespaces (say kubectl get namespace,pvc -o yaml), not reviewed: lookups (the claims a pod mounts) are answered from those in the review scope')
    .addOption(deedNamespaceOption("Deed's own namespace, which the webhooks never select: objects there (and in kube-system) are not judged, and it decides, with the opt-in label, which --existing objects' stamps count", DEFAULT_NAMESPACE))
    .option('--as <user>', 'requester username, e.g. system:serviceaccount:NS:NAME (default: the default service account of the object\'s namespace)')
    .option('--as-group <group>', 'requester group (repeatable)', collect, [])
    .option('--pod-name <name>', 'pod the requester\'s bound token belongs to (userInfo extra authentication.kubernetes.io/pod-name)')
    .option('--pod-uid <uid>', 'that pod\'s uid (authentication.kubernetes.io/pod-uid)')
    .option('--subresource <name>', 'subresource of the request, e.g. ephemeralcontainers')
    .option('-n, --namespace <ns>', 'namespace for objects that name none (default: default)', parseNamespace)
    .option('--config <file>', 'policy file (YAML); the embedded default otherwise', process.env.DEED_CONFIG)
    .option('--attestation-key <file>', 'one attestation key (else a fixed dry-run key: stamps it signs never verify in a cluster)')
    .option('--policy-keys', 'sign and verify with the key ring the policy names (attestation.keys or keyFile), as the webhook does')
    .addOption(outputOption(['yaml', 'json', 'patch'], 'yaml', 'what stdout carries: the objects as written, or the patches (one JSON line per object: apiVersion, kind, namespace, name or generateName, and patch)'))
    .action((o: ReviewFlags) => {
      process.exitCode = o.review !== undefined ? replay(o) : reviewFiles(o);
    });
}

function readInput(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new InputError(`cannot read ${file === '-' ? 'stdin' : file}: ${describeFileError(err)}`);
  }
}

/** The decision context, and whether it signs with the public dry-run key (said once reviews have run). */
function context(o: ReviewFlags, lookup?: ObjectLookup): { ctx: DecisionContext; dryRunKey: boolean } {
  const config = loadConfig(o.config);
  if (o.attestationKey !== undefined && o.policyKeys) throw new InputError('--attestation-key and --policy-keys each name the keys; give one');
  let ring: KeyRing;
  if (o.policyKeys) ring = loadKeyRing(config);
  else if (o.attestationKey !== undefined) ring = singleKeyRing(readAttestationKey(o.attestationKey));
  else ring = dryRunRing(config);
  const ctx = productionContext(config, ring);
  return { ctx: lookup ? { ...ctx, lookup } : ctx, dryRunKey: o.policyKeys !== true && o.attestationKey === undefined };
}

/**
 * Said before the report, only when reviews ran with the dry-run key: an input error stands
 * alone, without a warning about keys that were never used.
 */
function warnDryRunKey(dryRunKey: boolean, reviews: number): void {
  if (dryRunKey && reviews > 0) process.stderr.write("deed review: attestations are signed with the fixed dry-run key, not your cluster's; pass --policy-keys or --attestation-key FILE to use real ones\n");
}

function printObjects(objects: object[], output: 'yaml' | 'json'): void {
  if (objects.length === 0) return;
  if (output === 'json') {
    const doc = objects.length === 1 ? objects[0] : { apiVersion: 'v1', kind: 'List', items: objects };
    process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  } else {
    process.stdout.write(objects.map((obj) => stringify(obj)).join('---\n'));
  }
}

function replay(o: ReviewFlags): number {
  if (o.filename !== undefined) throw new InputError('--review replays captured AdmissionReviews; it does not go with -f');
  if (o.existing !== undefined) throw new InputError('--existing answers lookups for objects reviewed with -f; a replay carries what it carries');
  const files = o.review!;
  const bodies = files.map((file) => {
    const webhook = o.webhook ?? /^(admit|mutate|validate)\b/.exec(basename(file))?.[1];
    if (webhook === undefined) throw new InputError(`cannot tell the webhook from the file name ${basename(file)}: pass --webhook admit|mutate|validate`);
    if (!hasWebhook(webhook)) throw new InputError(`this build of Deed has no ${webhook} webhook`);
    try {
      return { file, webhook, body: JSON.parse(readInput(file)) as unknown };
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new InputError(`${file}: not valid JSON: ${jsonProblem(err)}`);
    }
  });
  const { ctx, dryRunKey } = context(o);
  const decisions = bodies.map(({ file, webhook, body }) => {
    const decision = decide(webhook, body, ctx);
    if (decision.kind === 'bad-request') throw new InputError(`${file}: ${decision.message}`);
    return { webhook, decision };
  });
  // A capture named mutate-* is what a mutating webhook received; the install's call /admit, which also judges a CREATE whole.
  const stampedOnly = o.webhook === undefined && decisions.some(({ webhook, decision }) => webhook === 'mutate' && decision.request?.operation === 'CREATE' && decision.verdict.allowed);
  const report = [
    ...decisions.flatMap(({ webhook, decision }) => reportReplay(webhook, decision)),
    ...(stampedOnly ? ["note: the mutate-* captures were replayed through /mutate, which only stamps; the install's mutating webhooks call /admit, which judges a CREATE whole: pass --webhook admit for their answer"] : []),
    replaySummary(decisions.map(({ decision }) => decision.verdict)),
  ];
  warnDryRunKey(dryRunKey, decisions.length);
  process.stderr.write(`${report.join('\n')}\n`);
  if (o.output === 'patch')
    process.stdout.write(
      decisions
        .map(({ decision }) => patchLine(requestTarget(decision.request), decision.verdict.patch ?? []))
        .join(''),
    );
  else printObjects(decisions.map(({ decision }) => decision.response), o.output);
  return decisions.every(({ decision }) => decision.verdict.allowed) ? 0 : 1;
}

/** Turns the files into one review input per object; any problem stops before a review runs. */
function inputs(o: ReviewFlags, ctx: DecisionContext): ObjectInput[] {
  const flags = { groups: o.asGroup, ...(o.as !== undefined ? { as: o.as } : {}), ...(o.podName !== undefined ? { podName: o.podName } : {}), ...(o.podUid !== undefined ? { podUid: o.podUid } : {}) };
  const readOne = (file: string): SourcedObject[] => readObjects(readInput(file), file === '-' ? 'stdin' : file);
  const read = (files: string | string[]): SourcedObject[] => expandFiles(typeof files === 'string' ? [files] : files, o.recursive, (m) => new InputError(m)).flatMap(readOne);
  const sub = o.subresource !== undefined ? { subResource: o.subresource } : {};
  const now = ctx.now();
  const place = (s: SourcedObject) => placeInNamespace(s.object, o.namespace, s.where);
  const who = (obj: KubeObject) => requesterFor(flags, obj.metadata.namespace);

  switch (o.operation) {
    case 'CREATE': {
      if (o.old !== undefined) throw new InputError('--old goes with --operation UPDATE or DELETE');
      if (o.filename === undefined) throw new InputError('give the objects to review with -f FILE (or - for stdin)');
      return read(o.filename).map((s) => {
        const object = withServiceAccountToken(forCreate(place(s), s.where), ctx.randomBytes);
        return { operation: 'CREATE', object, oldObject: null, userInfo: who(object), ...sub };
      });
    }
    case 'UPDATE': {
      if (o.filename === undefined || o.old === undefined) throw new InputError('--operation UPDATE needs the new objects (-f) and the stored ones (--old)');
      const news = read(o.filename);
      const olds = read(o.old);
      if (news.length !== olds.length) throw new InputError(`-f holds ${news.length} objects and --old ${olds.length}; they are paired in order`);
      return news.map((s, i) => {
        const old = stored(place(olds[i]!), olds[i]!.where, now, ctx.randomBytes);
        const object = forUpdate(place(s), old, s.where);
        return { operation: 'UPDATE', object, oldObject: old, userInfo: who(object), ...sub };
      });
    }
    case 'DELETE': {
      if ((o.filename === undefined) === (o.old === undefined)) throw new InputError('--operation DELETE takes the objects being deleted from -f or --old (one of them)');
      return read((o.filename ?? o.old)!).map((s) => {
        const old = stored(place(s), s.where, now, ctx.randomBytes);
        return { operation: 'DELETE', object: null, oldObject: old, userInfo: who(old), ...sub };
      });
    }
  }
}

function reviewFiles(o: ReviewFlags): number {
  if (o.webhook !== undefined) throw new InputError('--webhook goes with --review');
  // Lookups (the claims a pod mounts) are answered from the objects reviewed before, as
  // the cluster would hold them after `kubectl apply` of the same files in order.
  if ((o.filename ?? []).filter((f) => f === '-').length > 1) throw new InputError('stdin (-) can be read once');
  if (o.existing === '-' && (o.filename?.includes('-') || o.old === '-')) throw new InputError('only one of -f, --old and --existing can read stdin');
  const seen = new ReviewedObjects();
  const { ctx, dryRunKey } = context(o, seen.lookup);
  if (o.existing !== undefined) {
    const existing = readObjects(readInput(o.existing), o.existing === '-' ? 'stdin' : o.existing).map((s) =>
      s.object.apiVersion === 'v1' && s.object.kind === 'Namespace' ? s.object : stored(placeInNamespace(s.object, o.namespace, s.where), s.where, ctx.now(), ctx.randomBytes),
    );
    const untrusted = seen.rememberExisting(existing, o.deedNamespace);
    if (untrusted.length > 0) process.stderr.write(`${untrusted.join('\n')}\n`);
  }
  const objectInputs = inputs(o, ctx);
  const reviews: ObjectReview[] = objectInputs.map((input) => {
    const review = reviewObject(input, ctx, { deedNamespace: o.deedNamespace });
    const assumed = seen.takeAssumed();
    return seen.remember(review.allowed && assumed.length > 0 ? { ...review, assumed } : review);
  });
  warnDryRunKey(dryRunKey, reviews.length);
  process.stderr.write(`${[...reviews.flatMap(reportObject), reportSummary(reviews)].join('\n')}\n`);
  if (o.output === 'patch') process.stdout.write(reviews.map((r, i) => patchLine(patchTarget(objectInputs[i]!.object ?? objectInputs[i]!.oldObject), r.patch)).join(''));
  else printObjects(reviews.flatMap((r) => (r.result ? [r.result] : [])), o.output);
  return reviews.every((r) => r.allowed) ? 0 : 1;
}

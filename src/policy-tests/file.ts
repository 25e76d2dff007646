// The declarative policy test file of `deed test` (YAML): a policy, the objects already in
// the cluster, and cases, each an object, a requester, an operation and the expected
// outcome. Reading and checking a file is done here, with paths resolved beside it; the
// runner (run.ts) gets objects, never paths.
import { readFileSync } from 'node:fs';
import { cannotRead } from '../errors/file-errors.js';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import type { KubeObject } from '../admission/types.js';
import { describeIssues, didYouMean, type YamlSource } from '../config/diagnostics.js';
import type { Node } from 'yaml';
import { DEFAULT_CONFIG, parseConfig, parseConfigText, readYaml } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { RULES_BY_ID } from '../policy/rules/catalog.js';
import { InputError, type ReviewOperation } from '../review/build-review.js';
import { readObjects } from '../review/read-objects.js';

/** An object inline, or `{file: PATH}` (relative to the test file). */
const objectSource = z.union([z.object({ file: z.string().min(1) }).strict(), z.object({ apiVersion: z.string(), kind: z.string() }).loose()]);

/** An object an earlier case stored (or one of `existing`): the cluster as the file has left it. */
const storedRef = z.object({ stored: z.object({ kind: z.string().min(1), name: z.string().min(1), namespace: z.string().optional() }).strict() }).strict();
export type StoredRef = z.infer<typeof storedRef>['stored'];

const requesterSchema = z
  .object({
    user: z.string().min(1).optional().describe('A username; system:serviceaccount:NS:NAME for a service account.'),
    serviceAccount: z.string().regex(/^[a-z0-9][-a-z0-9]*:[a-z0-9][-a-z0-9.]*$/, 'must be NAMESPACE:NAME').optional(),
    groups: z.array(z.string()).default([]),
    pod: z.object({ name: z.string().min(1), uid: z.string().min(1) }).strict().optional().describe('The pod a bound service-account token belongs to.'),
  })
  .strict()
  .refine((r) => r.user === undefined || r.serviceAccount === undefined, 'give user or serviceAccount, not both');

/** Expected values of a label or annotation: a string, "*" for any value, null for absent. */
const expectedMap = z.record(z.string(), z.string().nullable());

const expectationSchema = z
  .object({
    allowed: z.boolean(),
    rules: z.array(z.string()).optional().describe('The rule ids of the denial (exactly these).'),
    warnings: z.array(z.string()).optional().describe('Each must be part of one admission warning.'),
    stamped: z
      .object({
        labels: expectedMap.optional(),
        annotations: expectedMap.optional(),
        fields: z.record(z.string(), z.unknown()).optional().describe('Dotted paths into the object as written, e.g. spec.activeDeadlineSeconds.'),
      })
      .strict()
      .optional(),
  })
  .strict();

const caseSchema = z
  .object({
    name: z.string().min(1),
    operation: z.enum(['CREATE', 'UPDATE', 'DELETE']).default('CREATE'),
    subresource: z.string().optional(),
    namespace: z.string().optional().describe('For objects that name none.'),
    requester: requesterSchema.optional(),
    object: objectSource.optional(),
    oldObject: z.union([storedRef, objectSource]).optional().describe('The stored object (UPDATE, DELETE).'),
    expect: expectationSchema,
  })
  .strict();

const fileSchema = z
  .object({
    name: z.string().optional(),
    policy: z.union([z.string(), z.record(z.string(), z.unknown())]).optional().describe('A policy file (relative to the test file), or the policy inline; the embedded default otherwise.'),
    existing: z.array(objectSource).default([]),
    cases: z.array(caseSchema).min(1),
  })
  .strict();

export type Expectation = z.infer<typeof expectationSchema>;
export type Requester = z.infer<typeof requesterSchema>;

export interface TestCase {
  name: string;
  operation: ReviewOperation;
  subresource?: string | undefined;
  namespace?: string | undefined;
  requester?: Requester | undefined;
  object?: { object: KubeObject; where: string } | undefined;
  oldObject?: { object: KubeObject; where: string } | { stored: StoredRef } | undefined;
  expect: Expectation;
}

export interface TestFile {
  file: string;
  name: string;
  policy: Config;
  existing: Array<{ object: KubeObject; where: string }>;
  cases: TestCase[];
}

/** `namedIn`: the test file that names this one, and where (its policy, a case's object). */
function readText(file: string, namedIn?: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new InputError(`${namedIn === undefined ? '' : `${namedIn}: `}${cannotRead(namedIn === undefined ? 'test file' : '', file, err)}`);
  }
}

export function loadTestFile(file: string): TestFile {
  const { yaml, value: doc } = readYaml(readText(file), file, (message) => new InputError(`${file}: not YAML: ${message}`));
  const parsed = fileSchema.safeParse(doc);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error.issues, fileSchema, doc, yaml);
    throw new InputError(`${file}: not a deed test file:\n  ${problems.join('\n  ')}`);
  }
  const t = parsed.data;
  const dir = dirname(file);
  const objects = (source: z.infer<typeof objectSource>, where: string) => {
    if ('file' in source && typeof source.file === 'string' && !('kind' in source)) {
      const path = resolve(dir, source.file);
      return readObjects(readText(path, `${file}: ${where}`), source.file);
    }
    return [{ object: structuredClone(source) as unknown as KubeObject, where }];
  };
  const one = (source: z.infer<typeof objectSource> | undefined, where: string): { object: KubeObject; where: string } | undefined => {
    if (source === undefined) return undefined;
    const found = objects(source, where);
    if (found.length !== 1) throw new InputError(`${file}: ${where} must be one object, found ${found.length}`);
    if (found[0]!.object.metadata === undefined) found[0]!.object.metadata = {};
    return found[0]!;
  };
  // Problems are named by a path that opens from where deed test runs, and by line.
  const policyFile = typeof t.policy === 'string' ? (isAbsolute(t.policy) ? t.policy : join(dir, t.policy)) : undefined;
  const policy =
    policyFile !== undefined
      ? parseConfigText(readText(policyFile, `${file}: policy`), policyFile)
      : parseConfig(t.policy ?? DEFAULT_CONFIG, `${file} policy`, t.policy !== undefined ? { ...yaml, prefix: ['policy'] } : undefined);
  const cases = t.cases.map((c, i): TestCase => {
    for (const [j, rule] of (c.expect.rules ?? []).entries()) if (!RULES_BY_ID.has(rule)) throw new InputError(unknownRule(yaml, ['cases', i, 'expect', 'rules', j], rule));
    const oldObject = c.oldObject !== undefined && 'stored' in c.oldObject ? { stored: c.oldObject.stored as StoredRef } : one(c.oldObject, `cases.${i}.oldObject`);
    return { ...c, object: one(c.object, `cases.${i}.object`), oldObject };
  });
  return { file, name: t.name ?? file, policy, existing: t.existing.flatMap((e, i) => objects(e, `existing.${i}`)), cases };
}

/** `FILE:LINE:COL: cases.0.expect.rules.1: ID is not one of Deed's rule ids`, with the id probably meant. */
function unknownRule(src: YamlSource, path: Array<string | number>, rule: string): string {
  const node = src.doc.getIn(path, true) as Node | null | undefined;
  const pos = node?.range ? src.lines.linePos(node.range[0]) : undefined;
  const guess = didYouMean(rule, [...RULES_BY_ID.keys()]);
  return `${src.file}${pos ? `:${pos.line}:${pos.col}` : ''}: ${path.join('.')}: ${rule} is not one of Deed's rule ids${guess !== undefined ? ` (did you mean ${guess}?)` : ''}; they are listed in docs/rules.md`;
}

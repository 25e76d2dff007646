// The stamp patch is built from what changes rather than by diffing copies of the maps:
// applied, it must give exactly the stamped fields asked for and leave everything else as
// it was, for any keys (JSON-pointer escapes included) and any starting object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import type { KubeObject, OwnerReference } from '../src/admission/types.js';
import { stampPatch } from '../src/policy/stamp-create.js';

// decode.ts refuses a __proto__ key before any policy code runs.
const key = fc.oneof(fc.constantFrom('deed.dev/environment', 'a~b', 'a/b/c', '~1', '~0/', '', 'app'), fc.string({ maxLength: 6 })).filter((k) => k !== '__proto__');
const map = fc.dictionary(key, fc.string({ maxLength: 4 }), { maxKeys: 5 });
const ref = fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('Pod'), name: fc.string({ maxLength: 4 }), uid: fc.uuid() }) as fc.Arbitrary<OwnerReference>;
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

const object = fc.record({
  labels: maybe(map),
  annotations: maybe(map),
  refs: maybe(fc.array(ref, { maxLength: 3 })),
  spec: maybe(fc.record({ activeDeadlineSeconds: maybe(fc.oneof(fc.integer(), fc.constant({ nested: true }) as fc.Arbitrary<unknown>)), containers: fc.constant([{ name: 'main' }]) }, { requiredKeys: ['containers'] })),
});

type Given = { labels?: Record<string, string>; annotations?: Record<string, string>; refs?: OwnerReference[]; spec?: Record<string, unknown> };
function build(o: Given): KubeObject {
  const metadata: KubeObject['metadata'] = { name: 'x', namespace: 'n' };
  if (o.labels !== undefined) metadata.labels = o.labels;
  if (o.annotations !== undefined) metadata.annotations = o.annotations;
  if (o.refs !== undefined) metadata.ownerReferences = o.refs;
  const obj: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata };
  if (o.spec !== undefined) obj.spec = Object.fromEntries(Object.entries(o.spec).filter(([, v]) => v !== undefined));
  return obj;
}

test('the stamp patch, applied, gives the stamped maps, references and spec fields asked for and leaves the rest of the object as it was', () => {
  fc.assert(
    fc.property(object, map, map, fc.boolean(), fc.option(ref, { nil: undefined }), maybe(fc.integer({ min: 1, max: 100 })), fc.boolean(), (generated, labelsGiven, annotationsGiven, keepGiven, addedGiven, deadline, automountOff) => {
      // Plain objects, as JSON.parse makes them (fast-check's have no prototype).
      const plain = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
      const [given, labels, annotations, added] = [plain(generated), plain(labelsGiven), plain(annotationsGiven), plain(addedGiven)];
      const obj = build(given);
      // Deed keeps what the object carries and writes its own keys over it, or drops some (a controller-made object's copied stamps).
      const wantLabels = keepGiven ? { ...obj.metadata.labels, ...labels } : labels;
      const wantAnnotations = keepGiven ? { ...obj.metadata.annotations, ...annotations } : annotations;
      const refs = [...(obj.metadata.ownerReferences ?? []), ...(added ? [added] : [])];
      const spec: Record<string, unknown> = {};
      if (deadline !== undefined) spec.activeDeadlineSeconds = deadline;
      if (automountOff) spec.automountServiceAccountToken = false;
      const ops = stampPatch(obj, wantLabels, wantAnnotations, refs, spec);
      const after = jsonpatch.applyPatch(structuredClone(obj), ops, true, false).newDocument;
      assert.deepEqual(after.metadata.labels, wantLabels);
      assert.deepEqual(after.metadata.annotations, wantAnnotations);
      assert.deepEqual(after.metadata.ownerReferences, refs.length > 0 ? refs : undefined);
      assert.deepEqual(after.spec, obj.spec === undefined && Object.keys(spec).length === 0 ? undefined : { ...obj.spec, ...spec });
      assert.equal(after.metadata.name, 'x');
      // Nothing outside the stamped fields is addressed.
      for (const op of ops) assert.match(op.path, /^\/(metadata\/(labels|annotations|ownerReferences)|spec)(\/|$)/);
      if (obj.spec !== undefined) for (const op of ops) if (op.path.startsWith('/spec')) assert.ok(op.path === '/spec/activeDeadlineSeconds' || op.path === '/spec/automountServiceAccountToken', op.path);
    }),
    { numRuns: 500 },
  );
});

test('a stamp patch over an object that already carries every stamp asked for is empty', () => {
  const obj = build({ labels: { a: '1', 'x/y': '2' }, annotations: { b: '3' }, refs: [{ apiVersion: 'v1', kind: 'Pod', name: 'r', uid: 'u' }], spec: { containers: [{ name: 'main' }] } });
  assert.deepEqual(stampPatch(obj, { ...obj.metadata.labels }, { ...obj.metadata.annotations }, obj.metadata.ownerReferences!, {}), []);
});

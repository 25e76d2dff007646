// `deed reap` and `deed audit` on list pages of objects with large metadata, in the Node heap
// their CronJobs give them. Anyone with ConfigMap rights can write a ConfigMap whose metadata
// is ~750 KB: 240 KB of annotations, and 3,000 empty data keys that the API server lists in
// managedFields (a metadata-only list returns them). Fifty of them were a first page of 38 MB,
// and both commands died of heap exhaustion; each page is now bounded in bytes as it is read.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REAPER_NODE_OPTIONS } from '../../../src/install/manifests.js';
import { run } from '../client.js';
import { ROOT } from '../../serve-process.js';
import type { Suite } from '../suite.js';
import type { ReapLine } from './reaper.js';

const OUTSIDE = 'bloat-outside';
const SANDBOX = 'bloat-sandbox';
const COUNT = 50;

function bloated(name: string, labels: Record<string, string>) {
  const data: Record<string, string> = {};
  for (let j = 0; j < 3000; j++) data[`k${String(j).padStart(5, '0')}-${'x'.repeat(140)}`] = '';
  const annotations: Record<string, string> = {};
  for (let j = 0; j < 24; j++) annotations[`example.com/pad-${j}`] = 'y'.repeat(10_000);
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels, annotations }, data };
}

/** The CLI as its CronJob runs it: the same Node heap flags. */
function deed(args: string[]) {
  return run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args, '-o', 'json', '--timeout', '30'], undefined, { ...process.env, NODE_OPTIONS: REAPER_NODE_OPTIONS }, 180_000);
}

export function largeMetadataCases(suite: () => Suite): void {
  describe('deed reap and deed audit on objects with large metadata', () => {
    before(async () => {
      const s = suite();
      const ok = (what: string, a: { status: number; text: string }) => assert.ok(a.status < 300, `${what}: ${a.status} ${a.text.slice(0, 300)}`);
      ok('namespace outside the review scope', await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: OUTSIDE } }));
      ok('opted-in namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: SANDBOX, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      // Outside the scope anyone may label them as alpha's: the reaper's list returns them.
      for (let k = 0; k < COUNT; k++) ok(`bloat-${k}`, await s.api(s.admin, 'POST', `/api/v1/namespaces/${OUTSIDE}/configmaps`, bloated(`bloat-${k}`, { 'deed.dev/managed': 'true', 'deed.dev/environment': 'alpha' })));
      // In a sandbox Deed reviews them (nothing refuses them); the audit lists every ConfigMap there.
      for (let k = 0; k < COUNT; k++) ok(`bloat-${k} in the sandbox`, await s.api(s.admin, 'POST', `/api/v1/namespaces/${SANDBOX}/configmaps`, bloated(`bloat-${k}`, { app: 'x' })));
    });

    after(async () => {
      // Other cases sweep every namespace: leave them no 75 MB of ConfigMaps.
      const s = suite();
      for (const ns of [OUTSIDE, SANDBOX]) {
        await s.api(s.admin, 'DELETE', `/api/v1/namespaces/${ns}/configmaps`);
        await s.api(s.admin, 'DELETE', `/api/v1/namespaces/${ns}`);
      }
    });

    test("the reaper, in its CronJob's heap, lists them page by page and judges each", async () => {
      const s = suite();
      const result = await deed(['reap', '--environment', 'alpha', '--kubeconfig', s.reaperA.kubeconfig!, '--config', s.policyFile, '--namespace', OUTSIDE]);
      assert.doesNotMatch(result.stderr, /FATAL ERROR|heap out of memory/);
      assert.equal(result.code, 0, result.stderr.slice(-2000));
      const lines = result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ReapLine);
      // Each judged; outside the scope, one line says so for the namespace, and the summary counts every one.
      const outside = lines.filter((l) => l.type === 'decision' && l.code === 'outside-review-scope');
      assert.equal(outside.length, 1, JSON.stringify(outside.slice(0, 2)));
      const summary = lines.find((l) => l.type === 'summary') as (ReapLine & { errors?: number; judged?: number; reasons?: Record<string, Record<string, number>> }) | undefined;
      assert.equal(summary?.errors, 0);
      assert.equal(summary?.reasons?.skip?.['outside-review-scope'], COUNT);
    });

    test("the audit of the sandbox, in the same heap, judges every ConfigMap there", async () => {
      const s = suite();
      const result = await deed(['audit', '--kubeconfig', s.admin.kubeconfig!, '--config', s.policyFile, '-n', SANDBOX]);
      assert.doesNotMatch(result.stderr, /FATAL ERROR|heap out of memory/);
      assert.equal(result.code, 0, result.stderr.slice(-2000));
      const summary = result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type?: string; objects?: number }).find((l) => l.type === 'summary');
      assert.ok((summary?.objects ?? 0) >= COUNT, result.stdout.slice(-1000));
    });
  });
}

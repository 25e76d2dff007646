// `deed coverage` against the suite's own API server, as the admin: every resource,
// subresource, verb and reference field it serves is classified, the CRDs other cases
// installed included (custom resources are the default row's without entries of their own).
// A Kubernetes upgrade that adds a kind, a subresource or a reference field fails here until
// it is classified (src/coverage/classifications.ts).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { writeKubeconfig } from '../control-plane.js';
import { run } from '../client.js';
import type { Suite } from '../suite.js';
import { ROOT } from '../../serve-process.js';

export function coverageCases(suite: () => Suite): void {
  describe('deed coverage against the real API server', () => {
    test('everything it serves is classified', async () => {
      const s = suite();
      const kubeconfig = join(mkdtempSync(join(tmpdir(), 'deed-coverage-')), 'admin.kubeconfig');
      writeKubeconfig(kubeconfig, s.cp.server, s.cp.ca, s.cp.admin.token);
      const r = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'coverage', '--kubeconfig', kubeconfig, '--timeout', '60'], undefined, process.env, 180_000);
      assert.equal(r.code, 0, `${r.stdout.split('\n').filter((l) => l.startsWith('unclassified') || l.startsWith('summary')).join('\n')}\n${r.stderr}`);
      assert.match(r.stdout, /^summary: .*; nothing unclassified$/m);
      assert.match(r.stdout, /^guarded\s+pods\/exec\s/m);
    });
  });
}

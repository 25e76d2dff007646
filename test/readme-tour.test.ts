// The README's tour, steps 2 to 4, run as written: each `sh` block in a fresh folder with
// bash, `npx deed` being this clone's bin/deed.js (the only stand-in), and each `text` block
// that follows compared with what the block printed. Step 1 needs `npm start` running and
// step 5 a cluster; the chart's install, NOTES and uninstall are in test/e2e/cases/adoption.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from './cli-process.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const tour = readme.slice(readme.indexOf('**2. Dry-run a policy offline.**'), readme.indexOf('**5. Install it.**'));
const blocks = [...tour.matchAll(/```(sh|text|yaml)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));

// The API server's (and deed review's) token volume gets a random five-character suffix.
const normalise = (text: string) => text.replace(/kube-api-access-[a-z0-9]{5}\b/g, 'kube-api-access-XXXXX');

describe("the README's tour", () => {
  test('steps 2 to 4 have commands to run and the output they print', () => {
    assert.ok(blocks.filter((b) => b.lang === 'sh').length >= 4, JSON.stringify(blocks.map((b) => b.lang)));
    assert.equal(blocks.filter((b) => b.lang === 'text').length, 3);
    assert.equal(blocks.filter((b) => b.lang === 'yaml').length, 0, 'every file the tour uses is written by a command');
  });

  test('runs verbatim, and every shown output is what the commands print', () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-tour-'));
    const shims = mkdtempSync(join(tmpdir(), 'deed-tour-bin-'));
    writeFileSync(join(shims, 'npx'), `#!/bin/sh\n[ "$1" = deed ] || { echo "npx shim: only deed" >&2; exit 127; }\nshift\nexec "${process.execPath}" "${join(ROOT, 'bin/deed.js')}" "$@"\n`);
    chmodSync(join(shims, 'npx'), 0o755);
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${shims}${delimiter}${process.env.PATH ?? ''}` };
    for (const k of ['DEED_CONFIG', 'KUBECONFIG']) delete env[k];
    let last = '';
    let compared = 0;
    for (const block of blocks) {
      if (block.lang === 'sh') {
        const run = spawnSync('bash', ['-c', `${block.body}`], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
        assert.equal(run.error, undefined);
        // A block shown without output prints nothing on stdout; the report goes to stderr.
        last = `${run.stdout}${run.stderr}`;
      } else if (block.lang === 'text') {
        assert.equal(normalise(last), normalise(block.body), 'the README shows what the commands print');
        compared++;
      }
    }
    assert.equal(compared, 3);
    // What the prose says about the files.
    const stored = readFileSync(join(dir, 'stored.yaml'), 'utf8');
    for (const needle of ['deed.dev/managed', 'deed.dev/environment', 'deed.dev/expires-at', 'deed.dev/create-nonce', 'deed.dev/attestation', 'activeDeadlineSeconds: 5400']) assert.ok(stored.includes(needle), needle);
    assert.doesNotMatch(stored, /kube-api-access/);
  });
});

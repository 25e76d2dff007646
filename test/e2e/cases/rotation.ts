// The README's rotation of the attestation key, walked with live objects in the real API
// server: from the pre-ring keyFile (v1), add a key (verify only), make it the signing key,
// retire the old one. At every step the owner's UPDATEs and finalizer removals go through,
// the reaper reaps leaks the old key signed, and at the end `deed keys usage` reports the
// old key unused and no object unverifiable; a run Lease the old key signed keeps it in use.
// `deed serve` is restarted with each step's policy, as a rollout would replace the pods.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import type { KubeObject } from '../../../src/admission/types.js';
import type { KeyUsage } from '../../../src/keys/usage.js';
import type { Command } from 'commander';
import { runInProcess } from '../../cli-process.js';
import { registerKeys } from '../../../src/cli/keys.js';
import { registerReap } from '../../../src/cli/reap.js';
import { get } from '../../serve-process.js';
import { annotation, KEYS, LEASES, PATHS, runLease, secret } from '../objects.js';
import type { Runner, Suite } from '../suite.js';

const NS = 'rotation';
const LEAKS = 'rotation-leaks';
const HOLD = 'example.com/hold';

interface ReapLine {
  type: string;
  name?: string;
  action?: string;
  outcome?: string;
  errors?: number;
}

export function rotationCases(suite: () => Suite): void {
  describe('rotating the attestation key with live objects', () => {
    let runner: Runner;
    let policies: string[];

    before(async () => {
      const s = suite();
      for (const name of [NS, LEAKS]) {
        const created = await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name, labels: { 'deed.dev/sandbox': 'enabled' } } });
        assert.equal(created.status, 201, created.text);
      }
      await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'runner' } });
      await s.bindSandboxRole(NS, [[NS, 'runner']]);
      await s.bindSandboxRole(LEAKS, [[NS, 'runner']]);
      runner = await s.newRunner(NS, 'runner-0');

      // The policy Deed runs, with this namespace's runner acting for alpha, at each step.
      const nextFile = join(s.cp.dir, 'deed', 'next.key');
      writeFileSync(nextFile, 'the-next-e2e-attestation-key-0123456789abcdef', { mode: 0o600 });
      const current = parse(readFileSync(s.policyFile, 'utf8')) as { environments: Array<{ id: string; serviceAccounts?: string[] }>; attestation?: unknown };
      current.environments.find((e) => e.id === 'alpha')!.serviceAccounts!.push(`${NS}:runner`);
      const at = (attestation: unknown) => stringify({ ...current, attestation });
      const both = [
        { id: 'key', file: s.keyFile },
        { id: 'next', file: nextFile },
      ];
      policies = [
        at({ keyFile: s.keyFile }), // before: the pre-ring form, signing v1
        at({ keys: both, signingKey: 'key' }), // 1: next added, verify only
        at({ keys: both, signingKey: 'next' }), // 2: next signs
        at({ keys: [both[1]] }), // 3: key retired
      ];
    });

    after(async () => {
      await suite().restartDeed();
    });

    const secretAt = (ns: string, name: string) => `${PATHS.Secret(ns)}/${name}`;
    const read = async (s: Suite, name: string): Promise<KubeObject | undefined> => {
      const answer = await s.api(s.admin, 'GET', secretAt(NS, name));
      return answer.status === 404 ? undefined : (answer.body as KubeObject);
    };
    const reap = async (s: Suite): Promise<ReapLine[]> => {
      const out = await inProcess(registerReap, ['reap', '--environment', 'alpha', '--kubeconfig', s.reaperA.kubeconfig!, '--config', s.policyFile, '--namespace', LEAKS, '--apply', '-o', 'json', '--timeout', '5']);
      return out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ReapLine);
    };
    const usage = async (s: Suite): Promise<KeyUsage> =>
      JSON.parse(await inProcess(registerKeys, ['keys', 'usage', '--kubeconfig', s.admin.kubeconfig!, '--config', s.policyFile, '--namespace', NS, '--namespace', LEAKS, '-o', 'json'])) as KeyUsage;
    /** Deleted by its owner, held by the finalizer, then released by the owner's UPDATE: gone. */
    const finish = async (s: Suite, name: string) => {
      const deleted = await s.api(runner.identity, 'DELETE', secretAt(NS, name));
      assert.equal(deleted.status, 200, `${name}: delete: ${deleted.text}`);
      assert.ok((await read(s, name))?.metadata.deletionTimestamp, `${name} is held by its finalizer`);
      const released = await s.api(runner.identity, 'PATCH', secretAt(NS, name), { metadata: { finalizers: null } }, 'application/merge-patch+json');
      assert.equal(released.status, 200, `${name}: finalizer removal: ${released.text}`);
      assert.equal(await read(s, name), undefined, `${name} is gone`);
    };

    test('every step keeps UPDATE, finalizer removal and reaping working, and ends with the old key unused', async () => {
      const s = suite();
      const signedWith = ['v1:', 'v2:key:', 'v2:next:', 'v2:next:'];
      const lasting: string[] = [];
      for (let step = 0; step < policies.length; step++) {
        await s.restartDeed(policies[step]);

        // The owner updates everything it has, whichever key signed it.
        for (const name of lasting) {
          const updated = await s.api(runner.identity, 'PATCH', secretAt(NS, name), { metadata: { labels: { 'example.com/step': String(step) } } }, 'application/merge-patch+json');
          assert.equal(updated.status, 200, `step ${step}: update of ${name}: ${updated.text}`);
        }
        // The previous step's short-lived object finishes: delete, then finalizer removal.
        if (step > 0) await finish(s, `short-${step - 1}`);
        // Leaks whose owner is gone are reaped, whichever key signed them.
        if (step > 0) {
          const lines = await reap(s);
          const leak = lines.find((l) => l.name === `leak-${step - 1}`);
          assert.equal(leak?.outcome, 'deleted', `step ${step}: leak-${step - 1}: ${JSON.stringify(lines)}`);
          assert.equal(lines.find((l) => l.type === 'summary')?.errors, 0);
        }
        if (step === 2) {
          // Before retiring: what the old key signed finishes, then it is reported unused.
          for (const name of lasting.splice(0)) await finish(s, name);
          const report = await usage(s);
          assert.deepEqual(report.keys.find((k) => k.key === 'key'), { key: 'key', role: 'verify-only', objects: 0, v1: 0 });
          assert.deepEqual(report.retirable, ['key']);
          assert.equal(report.unverifiable, 0);
          const metrics = (await get(s.deed, '/metrics')).body;
          assert.match(metrics, /deed_attestation_verifications_total\{key="key",format="v1",result="verified"\} [1-9]/, 'objects signed before the ring were verified under key');
        }

        // New objects, signed by this step's signing key.
        for (const name of [`lasting-${step}`, `short-${step}`]) {
          const created = await s.api(runner.identity, 'POST', PATHS.Secret(NS), { ...secret(name), metadata: { name, finalizers: [HOLD] } });
          assert.equal(created.status, 201, `step ${step}: ${name}: ${created.text}`);
          assert.ok(annotation(created.body as KubeObject, KEYS.attestation)!.startsWith(signedWith[step]!), `${name} signed ${signedWith[step]}`);
        }
        lasting.push(`lasting-${step}`);
        const leaky = await s.newRunner(NS, `leaky-${step}`);
        const leak = await s.api(leaky.identity, 'POST', PATHS.Secret(LEAKS), secret(`leak-${step}`));
        assert.equal(leak.status, 201, leak.text);
        assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Pod(NS)}/leaky-${step}`, { gracePeriodSeconds: 0 })).status, 200);
      }

      // After retiring: no object carries the old key, none is unverifiable, and the last
      // step's objects still finish.
      await finish(s, 'short-3');
      const report = await usage(s);
      assert.equal(report.keys.find((k) => k.key === 'key'), undefined, JSON.stringify(report.keys));
      assert.deepEqual(report.keys[0], { key: 'next', role: 'signing', objects: 3, v1: 0 }); // lasting-2, lasting-3, leak-3
      assert.equal(report.unverifiable, 0);
      assert.equal(report.unattested, 0);
      for (const name of lasting) await finish(s, name);
    });

    test('a run Lease the old key signed keeps it in use: no key is retirable until the Lease is gone', async () => {
      // Retired with the Lease still there, its run's Lease would be no evidence (lease-foreign),
      // and its environment could no longer renew or delete it.
      const s = suite();
      await s.restartDeed(policies[1]); // key signs
      const made = await s.api(runner.identity, 'POST', LEASES(NS), runLease({ name: 'run-rotation', renewTime: new Date() }));
      assert.equal(made.status, 201, made.text);
      assert.ok(annotation(made.body as KubeObject, KEYS.attestation)!.startsWith('v2:key:'), 'the run Lease is signed by key');
      await s.restartDeed(policies[2]); // next signs, key verifies only
      const held = await usage(s);
      assert.deepEqual(held.keys.find((k) => k.key === 'key'), { key: 'key', role: 'verify-only', objects: 1, v1: 0 }, JSON.stringify(held));
      assert.deepEqual(held.retirable, []);
      const gone = await s.api(runner.identity, 'DELETE', `${LEASES(NS)}/run-rotation`);
      assert.equal(gone.status, 200, gone.text);
      assert.deepEqual((await usage(s)).retirable, ['key']);
    });
  });
}

/**
 * Runs a deed subcommand in this process, through its own registration, and returns its
 * stdout; it must exit 0. (A child process would add seconds of start-up per call, and the
 * CLIs themselves are tested as processes elsewhere.)
 */
async function inProcess(register: (program: Command, write: (text: string) => void) => void, args: string[]): Promise<string> {
  const run = await runInProcess(register, args);
  if (run.error) throw run.error;
  assert.equal(run.exitCode ?? 0, 0, `deed ${args.slice(0, 2).join(' ')} exits 0:\n${run.stdout}`);
  return run.stdout;
}

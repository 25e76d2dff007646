// Finding the API server as kubectl does: --kubeconfig, then $KUBECONFIG (merged), then
// ~/.kube/config, then the in-cluster account; --context picks a context. Never a guess.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { loadKubeConfig } from '../src/kube/client.js';

const dir = mkdtempSync(join(tmpdir(), 'deed-kubeconfig-'));

function kubeconfigFile(name: string, clusters: Record<string, string>, current: string | undefined): string {
  const file = join(dir, name);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: Object.entries(clusters).map(([n, server]) => ({ name: n, cluster: { server } })),
    users: Object.keys(clusters).map((n) => ({ name: n, user: { token: `token-${n}` } })),
    contexts: Object.keys(clusters).map((n) => ({ name: n, context: { cluster: n, user: n } })),
    ...(current ? { 'current-context': current } : {}),
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

const staging = kubeconfigFile('staging', { staging: 'https://staging.example:6443' }, 'staging');
const both = kubeconfigFile('both', { prod: 'https://prod.example:6443', staging: 'https://other-staging.example:6443' }, 'prod');
const noCurrent = kubeconfigFile('no-current', { dev: 'https://dev.example:6443' }, undefined);
const emptyHome = mkdtempSync(join(tmpdir(), 'deed-home-'));
const home = mkdtempSync(join(tmpdir(), 'deed-home-'));
mkdirSync(join(home, '.kube'));
writeFileSync(join(home, '.kube', 'config'), JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'home', cluster: { server: 'https://home.example:6443' } }], users: [{ name: 'home', user: { token: 't' } }], contexts: [{ name: 'home', context: { cluster: 'home', user: 'home' } }], 'current-context': 'home' }));

const server = (kc: ReturnType<typeof loadKubeConfig>) => kc.getCurrentCluster()?.server;

describe('loadKubeConfig', () => {
  test('--kubeconfig wins over $KUBECONFIG and ~/.kube/config', () => {
    assert.equal(server(loadKubeConfig({ kubeconfig: staging }, { KUBECONFIG: both }, home)), 'https://staging.example:6443');
  });

  test('$KUBECONFIG files are merged, the first to set a name or the current context wins, and missing files are skipped', () => {
    const env = { KUBECONFIG: [join(dir, 'missing'), staging, both].join(delimiter) };
    const kc = loadKubeConfig({}, env, home);
    assert.equal(kc.currentContext, 'staging');
    assert.equal(server(kc), 'https://staging.example:6443', 'staging from the first file that names it');
    assert.equal(server(loadKubeConfig({ context: 'prod' }, env, home)), 'https://prod.example:6443');
  });

  test('a file without a current context takes it from the next one', () => {
    assert.equal(loadKubeConfig({}, { KUBECONFIG: [noCurrent, both].join(delimiter) }, emptyHome).currentContext, 'prod');
  });

  test('without --kubeconfig and $KUBECONFIG, ~/.kube/config', () => {
    assert.equal(server(loadKubeConfig({}, {}, home)), 'https://home.example:6443');
  });

  test('--context picks a context; one the configuration lacks is refused', () => {
    assert.equal(server(loadKubeConfig({ kubeconfig: both, context: 'staging' }, {}, emptyHome)), 'https://other-staging.example:6443');
    assert.throws(() => loadKubeConfig({ kubeconfig: both, context: 'qa' }, {}, emptyHome), /no context "qa" in .*both/);
  });

  test('nothing found and not in a cluster: refused, never a guessed localhost', () => {
    assert.throws(() => loadKubeConfig({}, {}, emptyHome), /no kubeconfig found .*pass --kubeconfig FILE/);
    assert.throws(() => loadKubeConfig({}, { KUBECONFIG: join(dir, 'missing') }, emptyHome), /none of the files in \$KUBECONFIG exists/);
    assert.throws(() => loadKubeConfig({ kubeconfig: noCurrent }, {}, emptyHome), /no current cluster/);
  });
});

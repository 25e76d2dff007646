// What a CLI test file against test/fake-apiserver.ts sets up: the server, started before
// its tests and closed after, a kubeconfig for it, and a policy file (environment alpha,
// signing with TEST_KEY), in a fresh folder.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { stringify } from 'yaml';
import { FakeApiServer } from './fake-apiserver.js';
import { TEST_KEY } from './helpers.js';

export interface CliCluster {
  /** The running server (after `before`). */
  readonly server: FakeApiServer;
  dir: string;
  kubeconfig: string;
  policyFile: string;
}

export function cliCluster(prefix: string): CliCluster {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let server: FakeApiServer | undefined;
  const cluster = {
    get server(): FakeApiServer {
      if (!server) throw new Error('the fake API server has not started');
      return server;
    },
    dir,
    kubeconfig: join(dir, 'kubeconfig'),
    policyFile: join(dir, 'policy.yaml'),
  };
  before(async () => {
    server = await new FakeApiServer().start();
    server.writeKubeConfig(cluster.kubeconfig);
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, TEST_KEY);
    writeFileSync(cluster.policyFile, stringify({ environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }], attestation: { keyFile } }));
  });
  after(() => server?.close());
  return cluster;
}

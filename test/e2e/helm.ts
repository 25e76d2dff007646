// The helm binary of KUBEBUILDER_ASSETS against the suite's control plane, as its
// administrator, with its cache, config and data in a folder of its own (`home`, under the
// suite's folder), so no case reads another's repositories or the machine's.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { run, type Run } from './client.js';
import type { Suite } from './suite.js';

export function helm(s: Suite, home: string, args: string[]): Promise<Run> {
  const dir = join(s.cp.dir, home);
  mkdirSync(dir, { recursive: true });
  const env = { ...process.env, HELM_CACHE_HOME: join(dir, 'cache'), HELM_CONFIG_HOME: join(dir, 'config'), HELM_DATA_HOME: join(dir, 'data') };
  return run(join(s.cp.bin, 'helm'), ['--kubeconfig', s.admin.kubeconfig!, ...args], undefined, env, 120_000);
}

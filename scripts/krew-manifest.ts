// The krew plugin manifest for `kubectl deed`: one archive for every platform, since the
// plugin is JavaScript run by the Node on the user's PATH. `npm run krew` builds the
// archive and writes krew/deed.yaml with its checksum; a test checks the rest stays current.
import { stringify } from 'yaml';
import { sandboxKindsProse } from '../src/policy/kinds.js';

export const KREW_MANIFEST = 'krew/deed.yaml';
export const KREW_BIN = 'package/bin/kubectl-deed.js';

export function krewArchiveName(version: string): string {
  return `kubectl-deed-v${version}.tar.gz`;
}

export function krewManifest(version: string, sha256: string): string {
  const uri = `https://github.com/deed-dev/deed/releases/download/v${version}/${krewArchiveName(version)}`;
  const platform = (os: string) => ({ selector: { matchLabels: { os } }, uri, sha256, bin: KREW_BIN });
  const manifest = {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: 'deed' },
    spec: {
      version: `v${version}`,
      homepage: 'https://github.com/deed-dev/deed',
      shortDescription: 'Dry-run, audit and install the Deed admission webhook',
      description: [
        `Deed stamps ownership onto sandbox ${sandboxKindsProse()} at admission`,
        'and guards every door to them. `kubectl deed review -f pod.yaml` runs its webhooks on',
        'objects offline; `kubectl deed reap`, `keys usage` and `manifests` work against the cluster.',
      ].join('\n'),
      caveats: 'Needs Node.js 22 or later on the PATH (`node --version`).',
      platforms: ['linux', 'darwin'].map(platform),
    },
  };
  return `# Written by \`npm run krew\` (scripts/krew.ts) for the release archive; do not edit by hand.\n${stringify(manifest, { lineWidth: 0 })}`;
}

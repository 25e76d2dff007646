// `npm run krew`: the release archive for krew (the package `npm pack` makes, with its
// production dependencies, so the plugin needs only Node) and krew/deed.yaml naming its
// checksum. Upload the archive to the release the manifest's uri names.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { krewArchiveName, krewManifest, KREW_MANIFEST } from './krew-manifest.js';

const root = join(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'deed-krew-'));
try {
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, encoding: 'utf8' }).trim().split('\n').at(-1)!;
  execFileSync('tar', ['-xzf', join(work, tarball), '-C', work]);
  execFileSync('npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock'], { cwd: join(work, 'package'), stdio: 'inherit' });
  const outDir = join(root, 'krew', 'dist');
  mkdirSync(outDir, { recursive: true });
  const archive = join(outDir, krewArchiveName(version));
  execFileSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '-czf', archive, '-C', work, 'package']);
  const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
  writeFileSync(join(root, KREW_MANIFEST), krewManifest(version, sha256));
  console.log(`wrote ${archive} (sha256 ${sha256}) and ${KREW_MANIFEST}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

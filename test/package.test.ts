// The `deed` and `kubectl-deed` executables as a user gets them: from a clone straight after
// `npm install`, through kubectl's plugin mechanism, and from the package `npm pack` makes.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { krewManifest, KREW_BIN, KREW_MANIFEST } from '../scripts/krew-manifest.js';
import { ROOT } from './cli-process.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
  engines: { node: string };
  scripts: Record<string, string>;
};

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: sbx-1
  namespace: sandbox-a
spec:
  containers:
    - name: main
      image: busybox
`;

/** A clone as `npm install` leaves it: sources, bin, dependencies, and no dist/. */
let clone: string;

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(command, args, { cwd: clone, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } });
  if (result.error) throw result.error;
  return result;
}

describe('the deed executables', () => {
  before(() => {
    clone = mkdtempSync(join(tmpdir(), 'deed-clone-'));
    cpSync(join(ROOT, 'bin'), join(clone, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(clone, 'package.json'));
    cpSync(join(ROOT, 'tsconfig.json'), join(clone, 'tsconfig.json'));
    symlinkSync(join(ROOT, 'src'), join(clone, 'src'));
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    writeFileSync(join(clone, 'pod.yaml'), POD);
  });
  after(() => rmSync(clone, { recursive: true, force: true }));

  test('in a clone that was never built, bin/deed.js runs the sources and prints the version', () => {
    const result = run(process.execPath, [join(clone, 'bin/deed.js'), '--version']);
    assert.equal(result.stderr, '');
    assert.equal(result.stdout.trim(), pkg.version);
    assert.equal(result.status, 0);
  });

  test('kubectl runs kubectl-deed as its plugin: kubectl deed review judges a pod file and its help says kubectl deed', () => {
    const path = join(clone, 'path');
    mkdirSync(path);
    symlinkSync(join(clone, pkg.bin['kubectl-deed']!), join(path, 'kubectl-deed'));
    const env = { PATH: `${path}${delimiter}${process.env.PATH ?? ''}` };

    const review = run('kubectl', ['deed', 'review', '-f', 'pod.yaml', '-o', 'patch'], env);
    assert.equal(review.status, 0, review.stderr);
    assert.match(review.stderr, /^Pod sandbox-a\/sbx-1 \(CREATE by system:serviceaccount:sandbox-a:default\): allowed$/m);
    assert.match(review.stdout, /"deed\.dev\/attestation":"v1:/);

    const help = run('kubectl', ['deed', '--help'], env);
    assert.match(help.stdout, /^Usage: kubectl deed /);
  });

  test('the package ships both executables and the compiled CLI they run, built before packing, and no sources', () => {
    assert.deepEqual(Object.keys(pkg.bin).sort(), ['deed', 'kubectl-deed']);
    assert.equal(pkg.scripts.prepack, 'npm run build');
    assert.ok(pkg.files.includes('dist/'), 'the build output is packed');
    const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    assert.equal(pack.status, 0, pack.stderr);
    const files = (JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    for (const bin of Object.values(pkg.bin)) assert.ok(files.includes(bin), `${bin} is in the package`);
    assert.deepEqual(files.filter((f) => /^(src|test|scripts|bench)\//.test(f)), []);
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { rootDir: string; outDir: string } };
    assert.deepEqual([build.compilerOptions.rootDir, build.compilerOptions.outDir], ['src', 'dist'], 'src/cli/main.ts compiles to the dist/cli/main.js bin/deed.js imports');
    assert.match(readFileSync(join(ROOT, 'bin/deed.js'), 'utf8'), /'\.\.\/dist\/cli\/main\.js'/);
  });

  test("the krew manifest is current for this version, and its bin is the package's kubectl-deed", () => {
    const text = readFileSync(join(ROOT, KREW_MANIFEST), 'utf8');
    const manifest = parse(text) as { spec: { version: string; platforms: Array<{ sha256: string; bin: string }> } };
    const sha256 = manifest.spec.platforms[0]!.sha256;
    assert.match(sha256, /^[0-9a-f]{64}$/);
    assert.equal(text, krewManifest(pkg.version, sha256), 'run npm run krew after a version change');
    assert.equal(KREW_BIN, `package/${pkg.bin['kubectl-deed']}`, 'npm pack puts the package under package/');
  });
});

describe('one version everywhere', () => {
  test('package.json, the chart (version, appVersion: the image tag it defaults to), the kustomize images, the krew manifest and deed --version say the same version', () => {
    const chart = parse(readFileSync(join(ROOT, 'manifests/helm/deed/Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    const values = parse(readFileSync(join(ROOT, 'manifests/helm/deed/values.yaml'), 'utf8')) as { image: { tag: string } };
    const krew = parse(readFileSync(join(ROOT, KREW_MANIFEST), 'utf8')) as { spec: { version: string } };
    assert.match(pkg.version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, 'semantic versioning');
    assert.deepEqual([chart.version, chart.appVersion, krew.spec.version], [pkg.version, pkg.version, `v${pkg.version}`]);
    assert.equal(values.image.tag, '', "the chart's image tag defaults to its appVersion");
    for (const file of ['manifests/kustomize/base/deployment.yaml', 'manifests/kustomize/components/audit/cronjob.yaml']) {
      const images = [...readFileSync(join(ROOT, file), 'utf8').matchAll(/image: (\S+)/g)].map((m) => m[1]);
      assert.deepEqual([...new Set(images)], [`ghcr.io/deed-dev/deed:${pkg.version}`], file);
    }
    const run = spawnSync(process.execPath, [join(ROOT, 'bin/deed.js'), '--version'], { encoding: 'utf8' });
    assert.equal(run.stdout.trim(), pkg.version);
  });

  test('main carries a pre-release version while the CHANGELOG has an Unreleased section', () => {
    const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
    if (/^## \[Unreleased\]/m.test(changelog)) assert.match(pkg.version, /-/, 'a version with Unreleased changes is a pre-release (0.2.0-dev), not the last release');
  });
});

// Docker cannot run in CI here; these check the Dockerfile's promises statically.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_AS_USER } from '../src/install/manifests.js';
import { ROOT } from './cli-process.js';

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
const stages = dockerfile.split(/^FROM /m).slice(1);

describe('the Dockerfile', () => {
  test('builds in one stage and runs from another with production dependencies only', () => {
    assert.equal(stages.length, 2);
    assert.match(stages[0]!, /RUN npm ci\b/);
    assert.match(stages[0]!, /RUN npm run build/);
    assert.match(stages[1]!, /RUN npm ci --omit=dev/);
    assert.match(stages[1]!, /COPY --from=build \/app\/dist \.\/dist/);
  });

  test('runs as the non-root uid the manifests declare, with deed serve as the default command and the measured GC setting', () => {
    assert.match(stages[1]!, new RegExp(`^USER ${RUN_AS_USER}(:${RUN_AS_USER})?$`, 'm'));
    assert.match(stages[1]!, /^ENTRYPOINT \["node", "--heap-growing-percent=50", "dist\/cli\/main\.js"\]$/m);
    assert.match(stages[1]!, /^CMD \["serve"\]$/m);
  });

  test("the image's Node flags are ones Node accepts (a mistyped flag would stop every container at start)", () => {
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(stages[1]!)![1]!) as string[];
    const nodeOptions = /NODE_OPTIONS=(\S+)/.exec(stages[1]!)![1]!;
    const flags = entrypoint.slice(1).filter((arg) => arg.startsWith('--'));
    const run = spawnSync(process.execPath, [...flags, '-e', 'process.stdout.write("ok")'], { env: { ...process.env, NODE_OPTIONS: nodeOptions }, encoding: 'utf8' });
    assert.equal(run.stderr, '');
    assert.equal(run.stdout, 'ok');
  });

  test("the image's Node line is one the package's engines field allows", () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const oldest = Number(/^>=(\d+)$/.exec(engines)![1]);
    const image = Number(/^ARG NODE_IMAGE=node:(\d+)-/m.exec(dockerfile)![1]);
    assert.ok(oldest >= 22, `engines ${engines}: Node 20 is past its end of life`);
    assert.ok(image >= oldest, `the image runs Node ${image}, engines says ${engines}`);
  });

  test('the build context keeps what the build copies and leaves out secrets and local state', () => {
    for (const copied of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'bin']) {
      assert.match(dockerfile, new RegExp(`COPY .*\\b${copied.replace('.', '\\.')}\\b`));
      assert.ok(!ignored.includes(copied), `${copied} is copied, so it must not be ignored`);
    }
    for (const local of ['.git', 'node_modules', 'certs', 'dist']) assert.ok(ignored.includes(local), `${local} stays out of the image`);
  });
});

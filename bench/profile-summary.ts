// Summarises V8 CPU profiles (`node --cpu-prof`): self time per function and per package,
// and inclusive time per function as a share of busy (non-idle) time, so an optimisation
// starts from what the profile shows. Multiply a busy share by the bench's CPU µs per
// review for an approximate per-review cost (the profile sees the main thread only).
// Usage: tsx bench/profile-summary.ts DIR_OR_FILE [TOP] [SKIP_S]
//   SKIP_S leaves out each profile's first seconds (start-up: module loading, the first list).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const target = process.argv[2];
if (!target) throw new Error('usage: profile-summary.ts DIR_OR_FILE [TOP]');
const top = Number(process.argv[3] ?? 25);
const skipUs = Number(process.argv[4] ?? 0) * 1e6;
const files = statSync(target).isDirectory() ? readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(target, f)) : [target];

function frameKey(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, 'npm:');
  return `${functionName || '(anonymous)'}  ${where ? `${where}:${lineNumber + 1}` : ''}`;
}

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
let busy = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  let at = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (at < skipUs) return;
    const node = nodes.get(id)!;
    const { functionName, url } = node.callFrame;
    const key = frameKey(node);
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const pkg = url === '' ? functionName.startsWith('(') ? functionName : '(native)' : url.includes('node_modules/') ? `npm:${/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)![1]}` : url.startsWith('node:') ? 'node core' : 'deed';
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    total += us;
    if (functionName === '(idle)') return;
    busy += us;
    // Inclusive: charge every distinct function on the sample's stack once (recursion counts once).
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) onStack.add(frameKey(nodes.get(at)!));
    for (const k of onStack) inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  });
}

const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
process.stdout.write(`${files.length} profile(s), ${(total / 1e6).toFixed(1)} s sampled\n\nself time by package\n`);
for (const [k, us] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15)) process.stdout.write(`${pct(us)}  ${k}\n`);
process.stdout.write(`\nself time by function (top ${top})\n`);
for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(us)}  ${k}\n`);
const ofBusy = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
process.stdout.write(`\ninclusive time by function, share of busy time (${(busy / 1e6).toFixed(1)} s; top ${top})\n`);
for (const [k, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${ofBusy(us)}  ${k}\n`);

/**
 * The top frames by self time of V8 CPU profiles (node --cpu-prof), all files of a directory summed:
 * what to cut first. Profile a bench's servers with BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR'.
 *   npx tsx bench/cpu-top.ts DIR [--top 15]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** Who a frame belongs to: a package (node_modules/x or @s/x), our code (src/<area>, jobs, workers), or null (Node's own, native). */
function ownerOf(url: string): string | null {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  const own = /\/(src\/[^/]+|jobs|workers)\//.exec(url);
  return own ? own[1] : null;
}

const dir = process.argv[2];
const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || 15;
const self = new Map<string, number>();
// Self time attributed to the nearest caller that is a package or our code: a socket write's time
// goes to pg, ioredis or koa, not to Node's writev.
const byOwner = new Map<string, number>();
let total = 0;
for (const f of readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'))) {
  const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { nodes: Node[]; startTime: number; endTime: number; samples: number[] };
  const us = (p.endTime - p.startTime) / Math.max(1, p.samples.length); // µs per sample
  const parent = new Map<number, Node>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n);
  for (const n of p.nodes) {
    const ms = ((n.hitCount ?? 0) * us) / 1000;
    if (!ms) continue;
    const name = n.callFrame.functionName;
    let owner: string | null = name.startsWith('(') ? name : null;
    for (let x: Node | undefined = n; !owner && x; x = parent.get(x.id)) owner = ownerOf(x.callFrame.url);
    owner ??= '(node internals)';
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + ms);
    const where = n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|jobs|workers)\//, '$1/');
    const key = `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + ms);
    total += ms;
  }
}
const busy = [...self].filter(([k]) => !k.startsWith('(idle)') && !k.startsWith('(program)'));
const busyMs = busy.reduce((s, [, v]) => s + v, 0);
console.log(`${dir}: ${total.toFixed(0)} ms sampled, ${busyMs.toFixed(0)} ms busy (not idle or program)`);
for (const [k, v] of busy.sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * v) / busyMs).toFixed(1).padStart(5)}%  ${v.toFixed(0).padStart(6)} ms  ${k}`);
const owners = [...byOwner].filter(([k]) => k !== '(idle)' && k !== '(program)');
console.log(`\nbusy time by owner (self time given to the nearest package or area of ours up the stack):`);
for (const [k, v] of owners.sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * v) / busyMs).toFixed(1).padStart(5)}%  ${v.toFixed(0).padStart(6)} ms  ${k}`);

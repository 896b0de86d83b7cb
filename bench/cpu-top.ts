/**
 * The top frames by self time of V8 CPU profiles (node --cpu-prof), all files of a directory summed:
 * what to cut first. Profile a bench's servers with BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR'.
 *   npx tsx bench/cpu-top.ts DIR [--top 15] [--window FROM,TO]
 * --window keeps the samples FROM to TO seconds after each profile's start (the measured loop, not
 * start-up and seeding). Also prints the busy time by what resumed the main thread: the first frame
 * of ours or of a package from the stack's root (a socket read's parser, a timer, a promise
 * continuation of one of our functions), with the time spent below it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Who a frame belongs to: a package (node_modules/x or @s/x), our code (src/<area>, jobs, workers), or null (Node's own, native). */
function ownerOf(url: string): string | null {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  const own = /\/(src\/[^/]+|jobs|workers)\//.exec(url);
  return own ? own[1] : null;
}

const where = (n: Node) => n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|jobs|workers)\//, '$1/');
const nameOf = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${where(n)}:${n.callFrame.lineNumber + 1}`;
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

const dir = process.argv[2];
const opt = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const top = Number(opt('--top')) || 15;
const window = (opt('--window') ?? '0,1e9').split(',').map(Number);
if (window.length !== 2 || !window.every(Number.isFinite) || window[0] >= window[1]) throw new Error('--window is FROM,TO: seconds since the profile started, FROM before TO');
const [from, to] = window.map((s) => s * 1e6); // µs
const self = new Map<string, number>();
// Self time attributed to the nearest caller that is a package or our code: a socket write's time
// goes to pg, ioredis or koa, not to Node's writev.
const byOwner = new Map<string, number>();
const byWake = new Map<string, number>();
let total = 0;
for (const f of readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'))) {
  const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, Node>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n);
  let at = 0;
  for (let i = 0; i < p.samples.length; i++) {
    at += Math.max(0, p.timeDeltas[i]); // V8 writes a negative delta now and then
    if (at < from || at > to) continue;
    const ms = Math.max(0, p.timeDeltas[i + 1] ?? 0) / 1000; // a sample stands for the time until the next one
    const n = byId.get(p.samples[i])!;
    const name = n.callFrame.functionName;
    let owner: string | null = name.startsWith('(') ? name : null;
    let wake: string | null = owner;
    for (let x: Node | undefined = n; x; x = parent.get(x.id)) {
      owner ??= ownerOf(x.callFrame.url);
      if (!name.startsWith('(') && ownerOf(x.callFrame.url)) wake = nameOf(x); // the last one up is the root's first
    }
    add(byOwner, owner ?? '(node internals)', ms);
    add(byWake, wake ?? '(node internals only)', ms);
    add(self, nameOf(n), ms);
    total += ms;
  }
}
const idle = (k: string) => k.startsWith('(idle)') || k.startsWith('(program)');
const busy = [...self].filter(([k]) => !idle(k));
const busyMs = busy.reduce((s, [, v]) => s + v, 0);
const print = (rows: Array<[string, number]>) => {
  for (const [k, v] of rows.sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * v) / busyMs).toFixed(1).padStart(5)}%  ${v.toFixed(0).padStart(6)} ms  ${k}`);
};
console.log(`${dir}: ${total.toFixed(0)} ms sampled, ${busyMs.toFixed(0)} ms busy (not idle or program)`);
print(busy);
console.log(`\nbusy time by owner (self time given to the nearest package or area of ours up the stack):`);
print([...byOwner].filter(([k]) => !idle(k)));
console.log(`\nbusy time by what resumed the main thread (the first frame of ours or of a package from the root, and all below it):`);
print([...byWake].filter(([k]) => !idle(k)));

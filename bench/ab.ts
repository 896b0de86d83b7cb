/**
 * Two builds of the service compared on this unsteady machine: `trade-cpu` runs in each build's
 * directory in turn (ABBA order, so a drift of the machine falls on both), with the same bench
 * file (this one's trade-cpu.ts), and the pairs are printed with their means and how many pairs
 * the second build won. A change smaller than the spread of the pairs is noise, whatever the means say.
 *   npx tsx bench/ab.ts --a DIR --b DIR [--pairs 4] [--markets 1,100] [--clients 8] [--seconds 8]
 * Each DIR is a checkout with node_modules and `npm run build` done (a git worktree of the old
 * commit, node_modules linked, is the usual A). Env vars reach both servers (RATE_LIMIT_*, TRADE_*).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { arg } from './lib';

const dirs = { a: arg('--a'), b: arg('--b') };
if (!dirs.a || !dirs.b) {
  console.error('usage: npx tsx bench/ab.ts --a DIR --b DIR [--pairs 4] [--markets 1,100] [--clients 8] [--seconds 8]');
  process.exit(2);
}
const PAIRS = Number(arg('--pairs')) || 4;
const MARKETS = (arg('--markets') ?? '1,100').split(',').map(Number);
const CLIENTS = arg('--clients') ?? '8';
const SECONDS = arg('--seconds') ?? '8';
const bench = resolve(__dirname, 'trade-cpu.ts');

interface Figure {
  tps: number;
  cpu: number;
  /** Trades a lane transaction (absent from builds before trade-cpu printed it). */
  batch?: number;
}

function measure(dir: string, markets: number): Figure {
  execFileSync('npx', ['tsx', bench, '--layout', 'all', '--seconds', SECONDS, '--clients', CLIENTS, '--markets', String(markets)], {
    cwd: dir,
    env: { ...process.env, BENCH_SERVER: 'dist' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const run = JSON.parse(readFileSync(resolve(dir, 'bench/results/trade-cpu-latest.json'), 'utf8')).runs[0];
  return { tps: run.tps, cpu: run.cpuMsPerTrade.serverTotal, batch: run.batches?.mean };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

for (const markets of MARKETS) {
  const pairs: Array<{ a: Figure; b: Figure }> = [];
  for (let i = 0; i < PAIRS; i++) {
    // ABBA: even pairs run A first, odd pairs B first.
    const first = i % 2 === 0 ? 'a' : 'b';
    const one = measure(dirs[first]!, markets);
    const two = measure(dirs[first === 'a' ? 'b' : 'a']!, markets);
    const pair = first === 'a' ? { a: one, b: two } : { a: two, b: one };
    pairs.push(pair);
    const per = (f: Figure) => `${f.tps.toFixed(0)}/s ${f.cpu.toFixed(2)} ms${f.batch === undefined ? '' : `, ${f.batch.toFixed(2)} a batch`}`;
    console.log(`${markets} market(s), pair ${i + 1}: A ${per(pair.a)}; B ${per(pair.b)}`);
  }
  const ta = mean(pairs.map((p) => p.a.tps));
  const tb = mean(pairs.map((p) => p.b.tps));
  const ca = mean(pairs.map((p) => p.a.cpu));
  const cb = mean(pairs.map((p) => p.b.cpu));
  const won = pairs.filter((p) => p.b.tps > p.a.tps).length;
  const spread = Math.max(...pairs.map((p) => p.b.tps / p.a.tps)) - Math.min(...pairs.map((p) => p.b.tps / p.a.tps));
  console.log(
    `${markets} market(s), ${CLIENTS} clients: trades/s ${ta.toFixed(0)} -> ${tb.toFixed(0)} (x${(tb / ta).toFixed(2)}; B ahead in ${won} of ${PAIRS}; pair ratios spread ${spread.toFixed(2)}), server CPU ms a trade ${ca.toFixed(2)} -> ${cb.toFixed(2)}`,
  );
}

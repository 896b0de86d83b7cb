/**
 * Two bench:trades runs side by side (a regression guard that is not a timed test):
 *   npx tsx bench/compare.ts bench/results/reference.json bench/results/latest.json
 * Prints, per layout, the ratios to pgbench (each run against its own pgbench, so machine load
 * matters less) and CPU-ms per trade, with the change; a ratio down or CPU up by more than 15% is
 * flagged. Exit code 0 either way: figures on a shared machine are for a person to judge.
 */
import { readFileSync } from 'node:fs';
import { transportName } from './lib';

type Run = { layout: string; ratios: Record<string, number>; cpuMsPerTrade: Record<string, number>; halfRate: { hot: { p99: number }; spread: { p99: number } } };
type File = { at: string; loadAverage?: string; sockets?: boolean; pgbench: { hot: number; simple: number }; runs: Run[] };

const [a, b] = process.argv.slice(2).map((f) => JSON.parse(readFileSync(f, 'utf8')) as File);
if (!a || !b) {
  console.error('usage: npx tsx bench/compare.ts A.json B.json');
  process.exit(2);
}
const f = (n: number | undefined, d = 2) => (n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(d));
console.log(`A ${a.at} (load ${a.loadAverage ?? '?'}), B ${b.at} (load ${b.loadAverage ?? '?'})`);
if (Boolean(a.sockets) !== Boolean(b.sockets)) console.log(`NOTE: A reached Postgres and Redis by ${transportName(Boolean(a.sockets))}, B by ${transportName(Boolean(b.sockets))}: the figures compare transports too`);
console.log(`pgbench hot row ${f(a.pgbench.hot, 0)} -> ${f(b.pgbench.hot, 0)} tps, -N ${f(a.pgbench.simple, 0)} -> ${f(b.pgbench.simple, 0)} tps`);
console.log('| layout | figure | A | B | change | |');
console.log('|---|---|---|---|---|---|');
for (const rb of b.runs) {
  const ra = a.runs.find((r) => r.layout === rb.layout);
  if (!ra) continue;
  const rows: Array<[string, number, number, 'up' | 'down']> = [
    ['1 market / pgbench hot row', ra.ratios.hotVsPgbenchHotRow, rb.ratios.hotVsPgbenchHotRow, 'up'],
    ['100 markets / pgbench -N', ra.ratios.spreadVsPgbenchN, rb.ratios.spreadVsPgbenchN, 'up'],
    ['p99 ms at half rate, 1 market', ra.halfRate.hot.p99, rb.halfRate.hot.p99, 'down'],
    ...Object.keys(rb.cpuMsPerTrade).map((k) => [`CPU ms/trade ${k}`, ra.cpuMsPerTrade[k], rb.cpuMsPerTrade[k], 'down'] as [string, number, number, 'down']),
  ];
  for (const [name, x, y, good] of rows) {
    const change = x ? (y - x) / x : NaN;
    const worse = good === 'up' ? change < -0.15 : change > 0.15;
    console.log(`| ${rb.layout} | ${name} | ${f(x)} | ${f(y)} | ${Number.isFinite(change) ? `${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)}%` : 'n/a'} | ${worse ? 'WORSE' : ''} |`);
  }
}

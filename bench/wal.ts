/**
 * What a trade writes to the WAL, by relation and by record type: the lane transaction alone
 * (bench/laneAlone.ts) applies batches while nothing else writes, and pg_waldump reads the WAL between
 * the two ends. Each shape runs twice: right after a CHECKPOINT (every page's first change writes a
 * full-page image) and again straight after (few images), so the rows' own bytes and the images' show
 * apart. Needs pg_waldump and read access to the server's pg_wal (a local server).
 * npx tsx bench/wal.ts [--rounds N]
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { openLaneBench, timeBatches, type LaneBench } from './laneAlone';
import { arg } from './lib';

const ROUNDS = Number(arg('--rounds')) || 200;

function waldump(): string {
  for (const v of ['17', '16', '15', '14']) {
    const p = `/usr/lib/postgresql/${v}/bin/pg_waldump`;
    if (existsSync(p)) return p;
  }
  return 'pg_waldump';
}

interface Tally {
  bytes: number;
  records: number;
  fpi: number;
}
const add = (m: Map<string, Tally>, k: string, bytes: number, fpi: number) => {
  const t = m.get(k) ?? { bytes: 0, records: 0, fpi: 0 };
  t.bytes += bytes;
  t.records += 1;
  t.fpi += fpi;
  m.set(k, t);
};

async function measure(lb: LaneBench, size: number, spread: number, checkpoint: boolean) {
  const q = (sql: string) => lb.deps.ds.query(sql);
  const [{ dir }] = await q(`SELECT current_setting('data_directory') || '/pg_wal' AS dir`);
  const names = new Map<string, string>();
  for (const r of await q(`SELECT c.relfilenode::text AS node, c.relname AS name FROM pg_class c WHERE c.relfilenode <> 0`)) names.set(r.node, r.name);
  if (checkpoint) await q('CHECKPOINT');
  const [{ lsn: start }] = await q('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  const times = await timeBatches(lb, size, spread, { rounds: Math.max(1, Math.round(ROUNDS / size)) });
  const [{ lsn: end }] = await q('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  // timeBatches warms with one extra batch inside the range
  const trades = (times.batches + 1) * size;
  const out = execFileSync(waldump(), ['-p', dir, '-s', start, '-e', end], { maxBuffer: 1 << 30, encoding: 'utf8' });
  const byRel = new Map<string, Tally>();
  const byType = new Map<string, Tally>();
  let total = 0;
  let fpiTotal = 0;
  let records = 0;
  for (const line of out.split('\n')) {
    const m = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*(\d+)\/\s*(\d+),.*desc: (\S+)(.*)$/.exec(line);
    if (!m) continue;
    const [, rmgr, rec, tot, desc, rest] = m;
    const bytes = Number(tot);
    const fpi = bytes - Number(rec);
    const rel = /rel \d+\/\d+\/(\d+)/.exec(rest)?.[1];
    add(byRel, rel ? (names.get(rel) ?? `rel ${rel}`) : '(none)', bytes, fpi);
    add(byType, `${rmgr} ${desc}`, bytes, fpi);
    total += bytes;
    fpiTotal += fpi;
    records += 1;
  }
  const per = (n: number) => (n / trades).toFixed(n / trades < 10 ? 2 : 0);
  console.log(
    `\n${size} a batch over ${spread} book(s), ${checkpoint ? 'after a CHECKPOINT' : 'steady'}: ${trades} trades, ${per(total)} B and ${per(records)} records a trade (full-page images ${per(fpiTotal)} B), ${times.tps.toFixed(0)} trades/s`,
  );
  const show = (title: string, m: Map<string, Tally>) => {
    console.log(`  by ${title} (B a trade, records a trade, of which image B):`);
    for (const [k, t] of [...m].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 14)) console.log(`    ${k.padEnd(40)} ${per(t.bytes).padStart(7)} ${per(t.records).padStart(6)} ${per(t.fpi).padStart(7)}`);
  };
  show('relation', byRel);
  show('record', byType);
}

async function main() {
  const lb = await openLaneBench(`mpps_bench_wal${process.env.BENCH_DB_SUFFIX ?? ''}`);
  try {
    for (const [size, spread] of [
      [1, 1],
      [8, 1],
      [64, 1],
      [8, 8],
    ] as const) {
      await measure(lb, size, spread, true);
      await measure(lb, size, spread, false);
    }
  } finally {
    await lb.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

/**
 * Statements and time per lane batch, in-process (the lane transaction alone, no queue): batches of
 * 1, 8 and 64 buys on one book and spread over 8 books, each statement the driver sends counted
 * (BEGIN and COMMIT included), and the round trips they take (a pipelined burst is one). pg_stat_statements is not loaded on the shared Postgres; this counts
 * at the client instead, by statement shape. npx tsx bench/trade-statements.ts [--fks]
 * With --fks it measures what the foreign keys of the tables a batch writes cost: batches of 8 and
 * 64 over 8 books with them, without them (dropped in this bench's own database), and with them again.
 */
import { Client } from 'pg';
import { openLaneBench, timeBatches, type LaneBench } from './laneAlone';
import { countRoundTrips } from '../test/helpers/roundTrips';

const shapes = new Map<string, number>();
const spent = new Map<string, number>();
// Round trips (a pipelined burst is one), counted as the tests count them; reset before each measured run.
const roundTrips = countRoundTrips();
let counting = false;
const query = Client.prototype.query as (...args: unknown[]) => unknown;
Client.prototype.query = function (this: Client, ...args: unknown[]) {
  if (counting) {
    const a = args[0] as string | { text?: string };
    const text = (typeof a === 'string' ? a : (a?.text ?? '')).replace(/\s+/g, ' ').trim();
    const shape = text.slice(0, 60);
    shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
    // Time from send to answer (promise form only: the lane's statements all use it).
    const t = performance.now();
    const r = query.apply(this, args) as Promise<unknown> | undefined;
    if (r && typeof r.then === 'function') void r.then(() => spent.set(shape, (spent.get(shape) ?? 0) + performance.now() - t), () => undefined);
    return r;
  }
  return query.apply(this, args);
} as typeof Client.prototype.query;

async function main() {
  const lane = await openLaneBench(`mpps_bench_statements${process.env.BENCH_DB_SUFFIX ?? ''}`);
  if (process.argv.includes('--fks')) await measureForeignKeys(lane);
  else for (const spread of [1, 8]) for (const size of [1, 8, 64]) await measure(lane, size, spread);
  await lane.close();
}

/** One line of figures (and the statements of a batch of 8 over 8 books or of 1) for batches of `size` trades over `spread` books. */
async function measure(lane: LaneBench, size: number, spread: number, label = ''): Promise<void> {
  const rounds = Math.max(3, Math.round(256 / size));
  const measuring = (on: boolean) => {
    if (on) {
      shapes.clear();
      spent.clear();
      roundTrips.reset();
    }
    counting = on;
  };
  const timed = await timeBatches(lane, size, spread, { rounds, measuring });
  const trips = roundTrips.trips;
  const total = [...shapes.values()].reduce((s, n) => s + n, 0);
  console.log(`${label}${spread} book(s), batch of ${size}: ${(total / timed.batches).toFixed(1)} statements in ${(trips / timed.batches).toFixed(1)} round trips per batch, ${timed.mean.toFixed(1)} ms per batch, ${(timed.mean / size).toFixed(2)} ms per trade`);
  if ((size === 8 && spread === 8) || size === 1) for (const [s, n] of [...shapes].sort((a, b) => b[1] - a[1])) console.log(`    ${(n / timed.batches).toFixed(1)}x ${((spent.get(s) ?? 0) / timed.batches).toFixed(2)} ms ${s}`);
}

/**
 * The foreign keys of the tables a lane batch writes or locks, and the batch's time with them,
 * without them and with them again (A-B-A, so a drift of the machine shows): a foreign key's check
 * runs as a trigger per row written, outside the plan's nodes, so EXPLAIN does not time it.
 */
async function measureForeignKeys(lane: LaneBench): Promise<void> {
  const { deps } = lane;
  const fks: Array<{ t: string; c: string; def: string }> = await deps.ds.query(
    `SELECT conrelid::regclass::text AS t, conname AS c, pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE contype = 'f' AND conrelid::regclass::text IN ('trades', 'ledger_entries', 'positions', 'trade_requests', 'events', 'markets', 'accounts', 'limit_orders')`,
  );
  console.log(`foreign keys: ${fks.map((f) => `${f.t}.${f.c}`).join(', ')}`);
  for (const pass of ['with foreign keys', 'without foreign keys', 'with foreign keys again'] as const) {
    if (pass === 'without foreign keys') for (const f of fks) await deps.ds.query(`ALTER TABLE ${f.t} DROP CONSTRAINT "${f.c}"`);
    if (pass === 'with foreign keys again') for (const f of fks) await deps.ds.query(`ALTER TABLE ${f.t} ADD CONSTRAINT "${f.c}" ${f.def}`);
    for (const size of [8, 8, 64]) await measure(lane, size, 8, `${pass}: `);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });

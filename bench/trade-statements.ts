/**
 * Statements and time per lane batch, in-process (the lane transaction alone, no queue): batches of
 * 1, 8 and 64 buys on one book and spread over 8 books, each statement the driver sends counted
 * (BEGIN and COMMIT included), and the round trips they take (a pipelined burst is one). pg_stat_statements is not loaded on the shared Postgres; this counts
 * at the client instead, by statement shape. npx tsx bench/trade-statements.ts [--fks]
 * With --fks it measures what the foreign keys of the tables a batch writes cost: batches of 8 and
 * 64 over 8 books with them, without them (dropped in this bench's own database), and with them again.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { inTransaction } from '../src/db/tx';
import { toNano } from '../src/domain/money';
import { bootDeps, closeDeps } from '../src/runtime';
import type { Deps } from '../src/deps';
import { accountId, transfer } from '../src/services/ledger';
import { createAgent } from '../src/services/identity';
import { createWorkspace } from '../src/services/workspaces';
import { createMetric } from '../src/services/metrics';
import { applyTradeBatch } from '../src/services/trading';
import { listMarkets } from '../src/services/books';
import { recreateDatabase, dropDatabase } from './lib';
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
  const db = `mpps_bench_statements${process.env.BENCH_DB_SUFFIX ?? ''}`;
  const url = await recreateDatabase(db);
  const deps = await bootDeps(loadConfig({ ...process.env, DATABASE_URL: url, QUEUE_PREFIX: `stmts${Date.now()}`, LOG_LEVEL: 'warn' }), { migrate: true });
  const { agents, ws } = await inTransaction(deps.ds, async (m) => {
    const owner = await createAgent(m, { nickname: `o${Date.now() % 1e6}` });
    await transfer(m, { from: accountId.issuance, to: accountId.agent(owner), amount: toNano(1e7), kind: 'mint' });
    const ws = await createWorkspace(m, owner, { name: 'stmts' });
    for (let i = 0; i < 2; i++) await createMetric(m, ws.id, { name: `x${i}`, value: 500 }, { agentId: owner, clock: deps.clock });
    const agents: string[] = [];
    for (let i = 0; i < 16; i++) {
      const a = await createAgent(m, { nickname: `t${i}x${Date.now() % 1e6}` });
      await transfer(m, { from: accountId.issuance, to: accountId.agent(a), amount: toNano(1e6), kind: 'mint' });
      agents.push(a);
    }
    return { agents, ws };
  });
  const books = (await listMarkets(deps.ds, ws.id, { limit: 8 })).map((b) => b.id);
  const job = (i: number, book: string) => ({ requestId: randomUUID(), agentId: agents[i % agents.length], workspaceId: ws.id, marketId: book, spec: { mode: 'buy' as const, direction: (i % 2 ? 'higher' : 'lower') as 'higher' | 'lower', amount: '1000000000' } });
  const jobs: Jobs = (size, spread) => Array.from({ length: size }, (_, i) => job(i, books[i % spread]));
  if (process.argv.includes('--fks')) await measureForeignKeys(deps, jobs);
  else for (const spread of [1, 8]) for (const size of [1, 8, 64]) await measure(deps, size, spread, jobs);
  await closeDeps(deps);
  await dropDatabase(db);
}

type Jobs = (size: number, spread: number) => Parameters<typeof applyTradeBatch>[1];

/** One line of figures (and the statements of a batch of 8 over 8 books or of 1) for batches of `size` trades over `spread` books. */
async function measure(deps: Deps, size: number, spread: number, jobs: Jobs, label = ''): Promise<void> {
  const rounds = Math.max(3, Math.round(256 / size));
  await applyTradeBatch(deps, jobs(size, spread)); // warm (prepared statements)
  shapes.clear();
  spent.clear();
  roundTrips.reset();
  counting = true;
  const t = performance.now();
  for (let r = 0; r < rounds; r++) await applyTradeBatch(deps, jobs(size, spread));
  const ms = performance.now() - t;
  counting = false;
  const trips = roundTrips.trips;
  const total = [...shapes.values()].reduce((s, n) => s + n, 0);
  console.log(`${label}${spread} book(s), batch of ${size}: ${(total / rounds).toFixed(1)} statements in ${(trips / rounds).toFixed(1)} round trips per batch, ${(ms / rounds).toFixed(1)} ms per batch, ${(ms / rounds / size).toFixed(2)} ms per trade`);
  if ((size === 8 && spread === 8) || size === 1) for (const [s, n] of [...shapes].sort((a, b) => b[1] - a[1])) console.log(`    ${(n / rounds).toFixed(1)}x ${((spent.get(s) ?? 0) / rounds).toFixed(2)} ms ${s}`);
}

/**
 * The foreign keys of the tables a lane batch writes or locks, and the batch's time with them,
 * without them and with them again (A-B-A, so a drift of the machine shows): a foreign key's check
 * runs as a trigger per row written, outside the plan's nodes, so EXPLAIN does not time it.
 */
async function measureForeignKeys(deps: Deps, jobs: Jobs): Promise<void> {
  const fks: Array<{ t: string; c: string; def: string }> = await deps.ds.query(
    `SELECT conrelid::regclass::text AS t, conname AS c, pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE contype = 'f' AND conrelid::regclass::text IN ('trades', 'ledger_entries', 'positions', 'trade_requests', 'events', 'markets', 'accounts', 'limit_orders')`,
  );
  console.log(`foreign keys: ${fks.map((f) => `${f.t}.${f.c}`).join(', ')}`);
  for (const pass of ['with foreign keys', 'without foreign keys', 'with foreign keys again'] as const) {
    if (pass === 'without foreign keys') for (const f of fks) await deps.ds.query(`ALTER TABLE ${f.t} DROP CONSTRAINT "${f.c}"`);
    if (pass === 'with foreign keys again') for (const f of fks) await deps.ds.query(`ALTER TABLE ${f.t} ADD CONSTRAINT "${f.c}" ${f.def}`);
    for (const size of [8, 8, 64]) await measure(deps, size, 8, jobs, `${pass}: `);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });

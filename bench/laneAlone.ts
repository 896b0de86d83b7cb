/**
 * The lane transaction alone: batches of trades applied in this process with the worker's own entry
 * (applyTradeBatch), one after another, with no HTTP, no queue and no other load. What it reaches is
 * what the trade path could reach if everything around the transaction cost nothing, so a
 * bench:trades gap splits into the transaction's own part and the part around it (issue 29).
 * bench/trade-statements.ts counts the same batches' statements.
 */
import { randomUUID } from 'node:crypto';
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
import { dropDatabase, percentile, recreateDatabase } from './lib';

export type BatchJobs = Parameters<typeof applyTradeBatch>[1];

export interface LaneBench {
  deps: Deps;
  /** `size` buys of 1 credit over the first `spread` books (1 to 8), traders and directions taking turns across calls (no book drifts one way). */
  jobs(size: number, spread: number): BatchJobs;
  close(): Promise<void>;
}

/** A database of its own with 16 funded traders and 8 books (two metrics' horizons). */
export async function openLaneBench(db: string): Promise<LaneBench> {
  const url = await recreateDatabase(db);
  const deps = await bootDeps(loadConfig({ ...process.env, DATABASE_URL: url, QUEUE_PREFIX: `lane${Date.now()}`, LOG_LEVEL: 'warn' }), { migrate: true });
  const { agents, ws } = await inTransaction(deps.ds, async (m) => {
    const owner = await createAgent(m, { nickname: `o${Date.now() % 1e6}` });
    await transfer(m, { from: accountId.issuance, to: accountId.agent(owner), amount: toNano(1e7), kind: 'mint' });
    const ws = await createWorkspace(m, owner, { name: 'lane' });
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
  if (books.length < 8) throw new Error(`the lane bench needs 8 books, it has ${books.length}`);
  let n = 0; // a running count: each book sees both directions and every trader in turn
  const job = (book: string) => {
    const i = n++;
    return {
      requestId: randomUUID(),
      agentId: agents[i % agents.length],
      workspaceId: ws.id,
      marketId: book,
      spec: { mode: 'buy' as const, direction: (Math.floor(i / 8) % 2 ? 'higher' : 'lower') as 'higher' | 'lower', amount: '1000000000' },
    };
  };
  return {
    deps,
    jobs: (size, spread) => {
      if (!Number.isInteger(spread) || spread < 1 || spread > books.length) throw new Error(`spread must be 1 to ${books.length} books, not ${spread}`);
      return Array.from({ length: size }, (_, i) => job(books[i % spread]));
    },
    close: async () => {
      await closeDeps(deps);
      await dropDatabase(db);
    },
  };
}

export interface BatchTimes {
  batches: number;
  /** Trades the batches refused (none, unless the bench's books or balances run out). */
  refused: number;
  /** Mean ms a batch, p50 ms a batch, accepted trades a second over the whole loop. */
  mean: number;
  p50: number;
  tps: number;
}

/**
 * Batches of `size` over `spread` books, one after another, for `rounds` batches or `seconds`,
 * whichever ends first, after one batch to warm (the connection's prepared statements).
 * `measuring` is told when the timed loop starts (true) and ends (false), for a caller's own counts.
 */
export async function timeBatches(
  lb: LaneBench,
  size: number,
  spread: number,
  until: { rounds?: number; seconds?: number; measuring?: (on: boolean) => void },
): Promise<BatchTimes> {
  if (until.rounds === undefined && until.seconds === undefined) throw new Error('timeBatches needs rounds or seconds');
  await applyTradeBatch(lb.deps, lb.jobs(size, spread));
  const rounds = until.rounds ?? Infinity;
  const each: number[] = [];
  let refused = 0;
  until.measuring?.(true);
  const t0 = performance.now();
  const end = until.seconds === undefined ? Infinity : t0 + until.seconds * 1000;
  try {
    while (each.length < rounds && performance.now() < end) {
      const jobs = lb.jobs(size, spread);
      const t = performance.now();
      const outcomes = await applyTradeBatch(lb.deps, jobs);
      each.push(performance.now() - t);
      refused += outcomes.filter((o) => !o.ok).length;
    }
  } finally {
    until.measuring?.(false);
  }
  const ms = performance.now() - t0;
  const accepted = each.length * size - refused;
  return { batches: each.length, refused, mean: ms / each.length, p50: percentile([...each].sort((a, b) => a - b), 50), tps: (accepted * 1000) / ms };
}

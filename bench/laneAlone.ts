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
  /** `size` buys of 1 credit over the first `spread` books (at most 8), traders and directions taking turns. */
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
  const job = (i: number, book: string) => ({
    requestId: randomUUID(),
    agentId: agents[i % agents.length],
    workspaceId: ws.id,
    marketId: book,
    spec: { mode: 'buy' as const, direction: (i % 2 ? 'higher' : 'lower') as 'higher' | 'lower', amount: '1000000000' },
  });
  return {
    deps,
    jobs: (size, spread) => Array.from({ length: size }, (_, i) => job(i, books[i % spread])),
    close: async () => {
      await closeDeps(deps);
      await dropDatabase(db);
    },
  };
}

export interface BatchTimes {
  batches: number;
  /** Mean ms a batch, p50 ms a batch, trades a second over the whole loop. */
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
  await applyTradeBatch(lb.deps, lb.jobs(size, spread));
  until.measuring?.(true);
  const rounds = until.rounds ?? Infinity;
  const end = until.seconds === undefined ? Infinity : performance.now() + until.seconds * 1000;
  const each: number[] = [];
  const t0 = performance.now();
  while (each.length < rounds && performance.now() < end) {
    const jobs = lb.jobs(size, spread);
    const t = performance.now();
    await applyTradeBatch(lb.deps, jobs);
    each.push(performance.now() - t);
  }
  const ms = performance.now() - t0;
  until.measuring?.(false);
  return { batches: each.length, mean: ms / each.length, p50: percentile([...each].sort((a, b) => a - b), 50), tps: (each.length * size * 1000) / ms };
}

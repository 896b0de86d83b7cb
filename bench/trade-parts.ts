/**
 * Where a trade's time goes, in-process: the lane transaction alone, the queue round trip plus the
 * transaction, and the raw Postgres and Redis round trips. npx tsx bench/trade-parts.ts
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config';
import { inTransaction } from '../src/db/tx';
import { toNano } from '../src/domain/money';
import { bootDeps, closeDeps } from '../src/runtime';
import { accountId, transfer } from '../src/services/ledger';
import { createAgent } from '../src/services/identity';
import { createWorkspace } from '../src/services/workspaces';
import { createMetric } from '../src/services/metrics';
import { applyTradeJob, submitTrade } from '../src/services/trading';
import { listMarkets } from '../src/services/books';
import { startWorkers } from '../workers';
import { recreateDatabase, dropDatabase, percentile } from './lib';
async function main() {
  const url = await recreateDatabase('mpps_bench_parts');
  const deps = await bootDeps(loadConfig({ ...process.env, DATABASE_URL: url, QUEUE_PREFIX: `parts${Date.now()}`, LOG_LEVEL: 'warn' }), { migrate: true });
  const workers = await startWorkers(deps);
  const { agent, ws } = await inTransaction(deps.ds, async (m) => {
    const agent = await createAgent(m, { nickname: `a${Date.now() % 1e6}` });
    await transfer(m, { from: accountId.issuance, to: accountId.agent(agent), amount: toNano(1e7), kind: 'mint' });
    const ws = await createWorkspace(m, agent, { name: 'parts' });
    await createMetric(m, ws.id, { name: 'x', value: 500 }, { agentId: agent, clock: deps.clock });
    return { agent, ws };
  });
  const [mk] = await listMarkets(deps.ds, ws.id, { limit: 1 });
  const spec = (i: number) => ({ mode: 'buy' as const, direction: (i % 2 ? 'higher' : 'lower') as 'higher' | 'lower', amount: String(1_000_000_000) });
  for (const [name, fn] of [
    ['applyTradeJob (tx only)', (i: number) => applyTradeJob(deps, { requestId: randomUUID(), agentId: agent, workspaceId: ws.id, marketId: mk.id, spec: spec(i) })],
    ['submitTrade (queue + tx)', (i: number) => submitTrade(deps, { agentId: agent, workspaceId: ws.id, marketId: mk.id, spec: { mode: 'buy', direction: i % 2 ? 'higher' : 'lower', amount: 1_000_000_000n }, hash: 'x' })],
    ['SELECT 1', () => deps.ds.query('SELECT 1')],
    ['redis PING', () => deps.redis?.ping() ?? Promise.resolve()],
  ] as const) {
    const lat: number[] = [];
    for (let i = 0; i < 400; i++) { const t = performance.now(); await (fn as (i: number) => Promise<unknown>)(i); lat.push(performance.now() - t); }
    lat.sort((a, b) => a - b);
    console.log(`${name}: p50 ${percentile(lat, 50).toFixed(2)} ms, p99 ${percentile(lat, 99).toFixed(2)} ms`);
  }
  await workers.close(); await closeDeps(deps); await dropDatabase('mpps_bench_parts');
}
main().catch((e) => { console.error(e); process.exit(1); });

/**
 * Recalculation after one base change in a workspace of 1,000 metrics, two shapes: a chain
 * (each metric reads the previous one) and a wide fan-out (999 metrics read one base). Every
 * dependant's total moves, so each change writes ~1,000 totals, readings and events in one
 * transaction. Figures: the service call alone, and the full HTTP PUT; first, dependencyOrder alone
 * over a 10,000-node chain (target < 1000 ms). Not part of npm test.
 *   npx tsx bench/metrics.ts [--runs 30] [--size 1000]
 */
import type { Server } from 'node:http';
import { createApp } from '../src/doors';
import { loadConfig } from '../src/config';
import { inTransaction } from '../src/db/tx';
import type { Deps } from '../src/deps';
import { dependencyOrder, type Node } from '../src/domain/formula';
import { registerParticipant } from '../src/services/participants';
import { createMetric, getMetricRow, updateMetric, type Actor } from '../src/services/metrics';
import { createWorkspace } from '../src/services/workspaces';
import { bootDeps, closeDeps } from '../src/runtime';
import { dropDatabase, recreateDatabase, runBench } from './lib';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || def : def;
};
const RUNS = arg('runs', 30);
const SIZE = arg('size', 1000);
const TARGET_MS = 200;
const ORDER_NODES = 10_000;
const ORDER_TARGET_MS = 1000;
const DB = 'mpps_bench_metrics';

interface Stats {
  p50: number;
  p95: number;
  max: number;
  mean: number;
}
function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: at(0.5), p95: at(0.95), max: s[s.length - 1], mean: s.reduce((a, b) => a + b, 0) / s.length };
}
const fmt = (st: Stats) => `p50 ${st.p50.toFixed(1)} ms  p95 ${st.p95.toFixed(1)} ms  max ${st.max.toFixed(1)} ms  mean ${st.mean.toFixed(1)} ms`;

/** dependencyOrder over a chain of ORDER_NODES given in reverse (nothing ready until the input's end), RUNS times. */
function orderTimes(): Stats {
  const chain: Node[] = [];
  for (let i = ORDER_NODES - 1; i >= 0; i--) chain.push({ id: `m${i}`, dependsOn: i ? [`m${i - 1}`] : [] });
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    dependencyOrder(chain);
    times.push(performance.now() - t0);
  }
  return stats(times);
}

type Shape = 'chain' | 'fan-out';

async function buildShape(deps: Deps, ownerId: string, shape: Shape, actor: Actor) {
  const ws = await inTransaction(deps.ds, (m) => createWorkspace(m, ownerId, { name: `bench ${shape} ${Date.now()}` }));
  const t0 = performance.now();
  const base = await inTransaction(deps.ds, async (m) => (await createMetric(m, ws.id, { name: 'm0', value: 1, timePreference: null }, actor)).metric);
  for (let i = 1; i < SIZE; i++) {
    const formula = shape === 'chain' ? `{m${i - 1}} + 1` : `{m0} * ${i}`;
    await inTransaction(deps.ds, (m) => createMetric(m, ws.id, { name: `m${i}`, formula, timePreference: null }, actor));
  }
  return { ws, base, setupMs: performance.now() - t0 };
}

/** The total of the last metric after base value v. */
const expectedTop = (shape: Shape, v: number) => (shape === 'chain' ? v + (SIZE - 1) : v * (SIZE - 1));

async function main(): Promise<string[]> {
  const url = await recreateDatabase(DB);
  const config = loadConfig({ ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn', SCHEDULER: 'false', QUEUE_PREFIX: `benchmetrics${Date.now()}` });
  const deps = await bootDeps(config, { migrate: true, poolSize: 4 });
  const server: Server = createApp(deps).listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  const port = (server.address() as { port: number }).port;
  const failures: string[] = [];
  try {
    const owner = await registerParticipant(deps, { nickname: `bench${Date.now() % 1e8}` });
    const actor: Actor = { agentId: owner.agentId, clock: deps.clock };
    console.log(`# bench/metrics: ${SIZE} metrics per workspace, ${RUNS} base changes per shape (target < ${TARGET_MS} ms)`);
    const order = orderTimes();
    console.log(`\ndependencyOrder, ${ORDER_NODES}-node chain: ${fmt(order)}; max ${(order.max / ORDER_TARGET_MS).toFixed(3)} of the ${ORDER_TARGET_MS} ms target: ${order.max < ORDER_TARGET_MS ? 'met' : 'MISSED'}`);
    if (order.max >= ORDER_TARGET_MS) failures.push(`dependencyOrder max ${order.max.toFixed(1)} ms`);
    for (const shape of ['chain', 'fan-out'] as Shape[]) {
      const { ws, base, setupMs } = await buildShape(deps, owner.agentId, shape, actor);
      console.log(`\n## ${shape}: built ${SIZE} metrics through createMetric in ${(setupMs / 1000).toFixed(1)} s`);

      const service: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        await inTransaction(deps.ds, (m) => updateMetric(m, ws.id, base.id, { value: 2 + i }, actor));
        service.push(performance.now() - t0);
      }
      const http: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        const r = await fetch(`http://127.0.0.1:${port}/api/metrics/${base.id}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-agent-key': owner.apiKey, 'x-workspace-id': ws.id },
          body: JSON.stringify({ value: 1000 + i }),
        });
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`PUT answered ${r.status}`);
        http.push(performance.now() - t0);
      }

      const top = await getMetricRow(deps.ds, ws.id, `m${SIZE - 1}`);
      const want = expectedTop(shape, 1000 + RUNS - 1);
      if (top?.total !== want) failures.push(`${shape}: top total ${top?.total}, expected ${want}`);
      const [{ n }] = await deps.ds.query(`SELECT count(*)::int AS n FROM outbox WHERE workspace_id = $1 AND type = 'metric:updated'`, [ws.id]);
      const s = stats(service);
      const h = stats(http);
      console.log(`service updateMetric: ${fmt(s)}`);
      console.log(`HTTP PUT /metrics/{id}: ${fmt(h)}`);
      console.log(`events written: ${n} (${SIZE} per change); top total ${top?.total} (expected ${want})`);
      console.log(`target < ${TARGET_MS} ms at p95 over HTTP: ${h.p95 < TARGET_MS ? 'met' : 'MISSED'}`);
      if (h.p95 >= TARGET_MS) failures.push(`${shape}: p95 ${h.p95.toFixed(1)} ms over HTTP`);
    }
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
    await closeDeps(deps);
    if (!process.env.KEEP_BENCH_DB) await dropDatabase(DB);
  }
  return failures;
}

runBench(main);

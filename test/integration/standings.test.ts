import { addSums, bookScore, emptySums, type ScoreSums } from '../../src/domain/calibration';
import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;

useTestApp((a) => (app = a));
afterEach(async () => {
  await expectLedgerSound(app.deps);
});

const at = (iso: string) => app.clock.set(new Date(iso));
const owner = (ws: TestWorkspace) => ({ 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id });
const settle = (ws: TestWorkspace, metricId: string, value: number) => app.http.post(`/api/metrics/${metricId}/settle`).set(owner(ws)).send({ value, reason: 'test' });
const untilSettled = { enabled: true, halfLife: 1, customHorizons: ['until-settled', '+1d'] };

interface Expected {
  resolvedMarkets: number;
  trades: number;
  volume: bigint;
  settled: bigint;
  sums: ScoreSums;
}

/** From scratch, as the test may and the service may not: every resolved book's trades and positions of these agents. */
async function fromScratch(agentIds: string[]): Promise<Map<string, Expected>> {
  const books = await app.deps.ds.query(
    `SELECT DISTINCT mk.id, mk.workspace_id, mk.metric_id, mk.range_min, mk.range_max, mk.resolved_value
       FROM positions p JOIN markets mk ON mk.id = p.market_id WHERE p.agent_id = ANY($1) AND mk.status = 'resolved'`,
    [agentIds],
  );
  const out = new Map<string, Expected>();
  for (const b of books) {
    const positions = await app.deps.ds.query(`SELECT agent_id, payout::text, net_cost::text FROM positions WHERE market_id = $1 AND agent_id = ANY($2)`, [b.id, agentIds]);
    for (const p of positions) {
      const trades = await app.deps.ds.query(`SELECT kind, probability_after, consensus_after, cost::text FROM trades WHERE market_id = $1 AND agent_id = $2`, [b.id, p.agent_id]);
      const key = `${p.agent_id}/${b.workspace_id}/${b.metric_id}`;
      const e = out.get(key) ?? { resolvedMarkets: 0, trades: 0, volume: 0n, settled: 0n, sums: emptySums() };
      const s = bookScore(
        trades.map((t: any) => ({ kind: t.kind, probabilityAfter: t.probability_after, consensusAfter: t.consensus_after })),
        { value: b.resolved_value, rangeMin: b.range_min, rangeMax: b.range_max },
      );
      out.set(key, {
        resolvedMarkets: e.resolvedMarkets + 1,
        trades: e.trades + trades.length,
        volume: e.volume + trades.reduce((v: bigint, t: any) => v + (BigInt(t.cost) < 0n ? -BigInt(t.cost) : BigInt(t.cost)), 0n),
        settled: e.settled + BigInt(p.payout) - BigInt(p.net_cost),
        sums: addSums(e.sums, s),
      });
    }
  }
  return out;
}

async function stored(agentIds: string[]): Promise<Map<string, Expected>> {
  const rows = await app.deps.ds.query(`SELECT * FROM participant_stats WHERE agent_id = ANY($1)`, [agentIds]);
  return new Map(
    rows.map((r: any) => [
      `${r.agent_id}/${r.workspace_id}/${r.metric_id}`,
      {
        resolvedMarkets: r.resolved_markets,
        trades: r.trades,
        volume: BigInt(r.volume),
        settled: BigInt(r.settled),
        sums: { forecasts: r.forecasts, sqErr: BigInt(r.sq_err), absErr: BigInt(r.abs_err), binCount: r.bin_count.map(Number), binP: r.bin_p.map(BigInt), binV: r.bin_v.map(BigInt) },
      },
    ]),
  );
}

describe('per-participant aggregates, written when books resolve', () => {
  it('equal a from-scratch computation over the trades, book after book, and a second settlement adds nothing', async () => {
    at('2026-11-21T10:00:00Z');
    const ws = await buildWorkspace(app, { public: true });
    const metrics = [await createMetric(app, ws, { value: 400, timePreference: untilSettled }), await createMetric(app, ws, { value: 600, timePreference: untilSettled })];
    const traders = await Promise.all([0, 1, 2].map(() => trader(app, ws, 2000)));
    const ids = traders.map((t) => t.id);
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (const [k, metric] of metrics.entries()) {
      const books = await marketsOf(app, ws, metric.id);
      for (let i = 0; i < 24; i++) {
        const t = traders[Math.floor(rnd() * traders.length)];
        const book = books[Math.floor(rnd() * books.length)];
        const r = rnd();
        const body =
          r < 0.4
            ? { direction: 'higher', amount: 1 + Math.floor(rnd() * 40) }
            : r < 0.8
              ? { direction: 'lower', amount: 1 + Math.floor(rnd() * 40) }
              : { direction: rnd() < 0.5 ? 'higher' : 'lower', sellShares: 1 };
        await trade(app, ws, t, { marketId: book.id, ...body });
      }
      expect((await settle(ws, metric.id, k === 0 ? 730 : 5000)).status).toBe(200);
      const want = await fromScratch(ids);
      expect(want.size).toBeGreaterThan(0);
      expect(await stored(ids)).toEqual(want);
    }
    // The until-settled books reopen; settling again resolves only books with no trades of these agents.
    expect((await settle(ws, metrics[0].id, 10)).status).toBe(200);
    expect(await stored(ids)).toEqual(await fromScratch(ids));
    const results = await app.deps.ds.query(`SELECT count(*)::int AS n FROM participant_results WHERE agent_id = ANY($1)`, [ids]);
    const positions = await app.deps.ds.query(`SELECT count(*)::int AS n FROM positions p JOIN markets mk ON mk.id = p.market_id WHERE p.agent_id = ANY($1) AND mk.status = 'resolved'`, [ids]);
    expect(results[0].n).toBe(positions[0].n);
  });
});

import { randomUUID } from 'node:crypto';
import { openBook, type BookState } from '../../src/domain/lmsr';
import { inTransaction } from '../../src/db/tx';
import { lockMarket } from '../../src/services/books';
import { resolveLockedMarket, voidBooksById } from '../../src/services/lifecycle';
import { buildWorkspace, mint, registerAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { balanceOf, createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;
let ws: TestWorkspace;

useTestApp((a) => (app = a));
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});

async function freshBook(body: Record<string, unknown> = {}) {
  const metric = await createMetric(app, ws, { value: 500, ...body });
  const markets = await marketsOf(app, ws, metric.id);
  return { metric, market: markets[0], markets };
}

describe('books', () => {
  it('a new metric opens funded baseline books at its reading, paid by the owner', async () => {
    const before = await balanceOf(app, ws.owner);
    const { markets } = await freshBook({ value: 250 });
    expect(markets.length).toBeGreaterThanOrEqual(2);
    for (const mk of markets) {
      expect(mk).toMatchObject({ funded: true, liquidity: 100, rangeMin: 0, rangeMax: 1000, status: 'open', resolved: false, branch: null, proposalId: null, tradeCount: 0 });
      expect(mk.prediction).toBeCloseTo(250, 6);
      expect(mk.probability).toBeCloseTo(0.25, 9);
      expect(mk.liquidityParameter).toBeCloseTo(100 / Math.log(4), 6);
      expect(mk.shares).toEqual({ higher: 0, lower: 0 });
      expect(mk.resolvesOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    const after = await balanceOf(app, ws.owner);
    expect(before - after).toBeCloseTo(100 * markets.length, 6);
  });

  it('a book whose funder cannot pay is unfunded: consensus null, trades refused with market_unfunded', async () => {
    const poor = await buildWorkspace(app, { public: true, ownerCredits: 0 });
    const metric = await createMetric(app, poor, { value: 10 });
    const [mk] = await marketsOf(app, poor, metric.id);
    expect(mk).toMatchObject({ funded: false, prediction: null, consensus: null, probability: null, liquidity: 0 });
    const t = await trader(app, poor, 10);
    const res = await trade(app, poor, t, { marketId: mk.id, direction: 'higher', amount: 1 });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('market_unfunded');
  });
});

describe('trading modes', () => {
  it('buys with an amount: consensus rises, balance falls by exactly the cost, position recorded', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 100);
    const res = await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 10 });
    expect(res.status).toBe(200);
    const b = market.liquidityParameter;
    const pAfter = 1 - 0.5 * Math.exp(-10 / b);
    expect(res.body).toMatchObject({ marketId: market.id, direction: 'higher', kind: 'buy', redeemed: 0, idempotentReplay: false });
    expect(res.body.cost).toBeLessThanOrEqual(10);
    expect(res.body.cost).toBeGreaterThan(9.999999);
    expect(res.body.probability).toBeCloseTo(pAfter, 6);
    expect(res.body.consensus).toBeCloseTo(pAfter * 1000, 3);
    expect(res.body.prevConsensus).toBeCloseTo(500, 6);
    expect(res.body.shares).toBeCloseTo(10 + b * Math.log(pAfter / 0.5), 6);
    expect(res.body.balance).toBeCloseTo(100 - res.body.cost, 9);
    expect(res.body.position).toEqual({ direction: 'higher', shares: res.body.shares });
    expect(await balanceOf(app, t)).toBeCloseTo(100 - res.body.cost, 9);
    const events = await app.deps.ds.query(`SELECT data FROM outbox WHERE type = 'trade:executed' AND data->>'marketId' = $1`, [market.id]);
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ agentId: t.id, direction: 'higher' });
    // The stored event keeps the full float; the answer shows it at 9 decimals (issue 56).
    expect(events[0].data.newConsensus).toBeCloseTo(res.body.consensus, 8);
  });

  it('moves the price to a targetValue within maxBudget (alias value announces its deprecation)', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 1000);
    const res = await trade(app, ws, t, { marketId: market.id, targetValue: 700, maxBudget: 500 });
    expect(res.status).toBe(200);
    expect(res.body.direction).toBe('higher');
    expect(res.body.consensus).toBeCloseTo(700, 4);
    expect(res.body.limited).toBe(true);
    expect(res.body.spent + res.body.unspent).toBeCloseTo(500, 9);
    const cheap = await trade(app, ws, t, { marketId: market.id, value: 300, amount: 0.5 });
    expect(cheap.status).toBe(200);
    expect(cheap.headers.deprecation).toBe('true');
    expect(cheap.body.warnings[0]).toMatch(/targetValue/);
    expect(cheap.body.direction).toBe('lower');
    expect(cheap.body.limited).toBe(false);
    expect(cheap.body.spent).toBeCloseTo(0.5, 6);
  });

  it('sells held shares for proceeds and refuses to sell more than held', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 100);
    const buy = await trade(app, ws, t, { marketId: market.id, direction: 'lower', amount: 20 });
    const tooMany = await trade(app, ws, t, { marketId: market.id, direction: 'lower', sellShares: buy.body.shares + 1 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: 'insufficient_shares', available: buy.body.shares });
    const wrongSide = await trade(app, ws, t, { marketId: market.id, direction: 'higher', sellShares: 1 });
    expect(wrongSide.body).toMatchObject({ code: 'insufficient_shares', available: 0 });
    const sell = await trade(app, ws, t, { marketId: market.id, direction: 'lower', sellShares: buy.body.shares });
    expect(sell.status).toBe(200);
    expect(sell.body.kind).toBe('sell');
    expect(sell.body.proceeds).toBeLessThanOrEqual(buy.body.cost);
    expect(sell.body.proceeds).toBeGreaterThan(buy.body.cost - 0.000001);
    expect(sell.body.consensus).toBeCloseTo(500, 4);
    expect(sell.body.position).toEqual({ direction: null, shares: 0 });
  });

  it('buying the other side redeems matched pairs for exactly 1 credit each without moving the price', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 200);
    const h = await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 30 });
    const l = await trade(app, ws, t, { marketId: market.id, direction: 'lower', amount: 10 });
    expect(l.status).toBe(200);
    expect(l.body.redeemed).toBeCloseTo(Math.min(h.body.shares, l.body.shares), 9);
    expect(l.body.position.direction).toBe('higher');
    expect(l.body.position.shares).toBeCloseTo(h.body.shares - l.body.shares, 6);
    expect(l.body.balance).toBeCloseTo(200 - h.body.cost - l.body.cost + l.body.redeemed, 6);
    const hist = await app.http.get(`/api/agents/me/trades`).set('X-Agent-Key', t.key);
    const kinds = hist.body.map((r: any) => r.kind);
    expect(kinds).toEqual(['redeem', 'buy', 'buy']);
    expect(hist.body[0]).toMatchObject({ direction: null, marketId: market.id });
    expect(hist.body[0].cost).toBeCloseTo(-l.body.redeemed, 9);
  });

  it('the condensed form returns the updated Market', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 50);
    const res = await app.http.post(`/api/predictions/markets/${market.id}/trade`).set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.slug).send({ side: 'lower', credits: 5 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: market.id, tradeCount: 1 });
    expect(res.body.prediction).toBeLessThan(500);
    const bad = await app.http.post(`/api/predictions/markets/${market.id}/trade`).set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id).send({ side: 'up', credits: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/side/);
  });

  it('finds the market by metric name and target date', async () => {
    const { metric, market } = await freshBook();
    const t = await trader(app, ws, 50);
    const res = await trade(app, ws, t, { metricName: metric.name.toUpperCase(), targetDate: market.targetDate, direction: 'higher', amount: 1 });
    expect(res.status).toBe(200);
    expect(res.body.marketId).toBe(market.id);
    const missing = await trade(app, ws, t, { metricId: metric.id, targetDate: '1999-01', direction: 'higher', amount: 1 });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('market_not_found');
  });
});

describe('price guard', () => {
  it('409 price_moved when the call is already past the limit; nothing spent', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 100);
    const res = await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 10, limit: 400 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'price_moved', limit: 400 });
    expect(res.body.consensus).toBeCloseTo(500, 6);
    expect(await balanceOf(app, t)).toBe(100);
  });

  it('fills a buy up to the limit and reports limited, spent, unspent', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 1000);
    const res = await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 500, limit: 600 });
    expect(res.status).toBe(200);
    expect(res.body.limited).toBe(true);
    expect(res.body.consensus).toBeCloseTo(600, 3);
    expect(res.body.spent).toBeCloseTo(res.body.cost, 9);
    expect(res.body.unspent).toBeCloseTo(500 - res.body.cost, 9);
    expect(res.body.cost).toBeCloseTo(market.liquidityParameter * Math.log(0.5 / 0.4), 5);
  });

  it('fills a sell down to the limit and reports sharesSold and sharesKept', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 1000);
    const buy = await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 100 });
    const sell = await trade(app, ws, t, { marketId: market.id, direction: 'higher', sellShares: buy.body.shares, limit: 550 });
    expect(sell.status).toBe(200);
    expect(sell.body.limited).toBe(true);
    expect(sell.body.consensus).toBeCloseTo(550, 3);
    expect(sell.body.sharesSold + sell.body.sharesKept).toBeCloseTo(buy.body.shares, 9);
    expect(sell.body.position.shares).toBeCloseTo(sell.body.sharesKept, 6);
  });

  it('a targetValue trade with a limit must carry a direction (400)', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 10);
    const res = await trade(app, ws, t, { marketId: market.id, targetValue: 600, maxBudget: 5, limit: 550 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/direction/);
  });
});

describe('dry runs', () => {
  it('price without changing anything, need trade but no credits, and refuse what a real trade refuses', async () => {
    const { market } = await freshBook();
    const poor = await trader(app, ws, 0);
    const res = await trade(app, ws, poor, { marketId: market.id, direction: 'higher', amount: 25, dryRun: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dryRun: true, marketId: market.id, direction: 'higher', balance: 0, affordable: false, redeemed: 0 });
    expect(res.body.shortfall).toBeCloseTo(res.body.cost, 9);
    expect(res.body.basis).toMatchObject({ tradeCount: 0, liquidity: 100 });
    expect(res.body.basis.consensus).toBeCloseTo(500, 6);
    const after = await app.http.get(`/api/predictions/markets/${market.id}`).set('X-Workspace-Id', ws.id);
    expect(after.body.tradeCount).toBe(0);
    expect(after.body.prediction).toBeCloseTo(500, 6);
    const refused = await trade(app, ws, poor, { marketId: market.id, direction: 'lower', sellShares: 1, dryRun: true });
    expect(refused.body.code).toBe('insufficient_shares');
    const anon = await app.http.post('/api/predictions/trade').set('X-Workspace-Id', ws.id).send({ marketId: market.id, direction: 'higher', amount: 1, dryRun: true });
    // The workspace reads anonymously: the act lacks only an identity (issue 57: 403 identity_required, was 401).
    expect(anon.status).toBe(403);
    expect(anon.body.code).toBe('identity_required');
    const outsider = await registerAgent(app);
    const notMember = await trade(app, ws, outsider, { marketId: market.id, direction: 'higher', amount: 1, dryRun: true });
    expect(notMember.status).toBe(403);
    expect(notMember.body).toMatchObject({ code: 'not_authorized', requiredCapabilities: ['trade'] });
    const trades = await app.deps.ds.query(`SELECT count(*)::int AS n FROM trade_requests WHERE agent_id = $1`, [poor.id]);
    expect(trades[0].n).toBe(0);
  });
});

describe('idempotency', () => {
  it('a retry replays the first result once; another body is 409; the key is per participant', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 100);
    const key = randomUUID();
    const body = { marketId: market.id, direction: 'higher', amount: 7 };
    const first = await trade(app, ws, t, body, key);
    const second = await trade(app, ws, t, body, key);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ...first.body, idempotentReplay: true });
    expect(await balanceOf(app, t)).toBeCloseTo(100 - first.body.cost, 9);
    const reuse = await trade(app, ws, t, { ...body, amount: 8 }, key);
    expect(reuse.status).toBe(409);
    expect(reuse.body.code).toBe('idempotency_key_reuse');
    const other = await trader(app, ws, 100);
    const theirs = await trade(app, ws, other, body, key);
    expect(theirs.body.idempotentReplay).toBe(false);
  });

  it('the journal keeps a request job only while it is pending: applied and refused rows drop it, and the replay still answers', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 10);
    const key = randomUUID();
    const ok = await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 2 }, key);
    const refused = await trade(app, ws, t, { marketId: market.id, direction: 'lower', amount: 500 }, randomUUID());
    expect(ok.status).toBe(200);
    expect(refused.body.code).toBe('insufficient_balance');
    const rows: Array<{ status: string; has_job: boolean; has_response: boolean }> = await app.deps.ds.query(
      `SELECT status, job IS NOT NULL AS has_job, response IS NOT NULL AS has_response FROM trade_requests WHERE agent_id = $1 ORDER BY created_at`,
      [t.id],
    );
    expect(rows).toEqual([
      { status: 'done', has_job: false, has_response: true },
      { status: 'failed', has_job: false, has_response: true },
    ]);
    const replay = await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 2 }, key);
    expect(replay.body).toEqual({ ...ok.body, idempotentReplay: true });
    await expectLedgerSound(app.deps);
  });

  it('a failed call does not consume its key', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 1);
    const key = randomUUID();
    const body = { marketId: market.id, direction: 'lower', amount: 5 };
    const short = await trade(app, ws, t, body, key);
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ code: 'insufficient_balance', balance: 1, cost: 5 });
    await mint(app, t.id, 10);
    const retry = await trade(app, ws, t, body, key);
    expect(retry.status).toBe(200);
    expect(retry.body.idempotentReplay).toBe(false);
  });

  it('duplicates arriving together apply once and all return the same trade', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 100);
    const key = randomUUID();
    const body = { marketId: market.id, direction: 'higher', amount: 3 };
    const all = await Promise.all(Array.from({ length: 6 }, () => trade(app, ws, t, body, key)));
    expect(all.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(new Set(all.map((r) => r.body.tradeId)).size).toBe(1);
    expect(all.filter((r) => r.body.idempotentReplay === false)).toHaveLength(1);
    const n = await app.deps.ds.query(`SELECT count(*)::int AS n FROM trades WHERE market_id = $1`, [market.id]);
    expect(n[0].n).toBe(1);
    expect(await balanceOf(app, t)).toBeCloseTo(100 - all[0].body.cost, 9);
  });
});

describe('refusals', () => {
  it.each([
    ['unknown market', { marketId: '00000000-0000-4000-8000-000000000000', direction: 'higher', amount: 1 }, 404, 'market_not_found'],
    ['too small', { direction: 'higher', amount: 0.0000001 }, 400, 'trade_too_small'],
    ['no mode', { direction: 'higher' }, 400, 'validation_failed'],
    ['sell without direction', { sellShares: 1 }, 400, 'validation_failed'],
    ['negative amount', { direction: 'higher', amount: -1 }, 400, 'validation_failed'],
    ['bad direction', { direction: 'up', amount: 1 }, 400, 'validation_failed'],
    ['bad target date', { marketId: undefined, metricName: 'x', targetDate: '2026-13', direction: 'higher', amount: 1 }, 400, 'validation_failed'],
  ])('%s', async (_label, body, status, code) => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 10);
    const res = await trade(app, ws, t, { marketId: market.id, ...body });
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect(typeof res.body.error).toBe('string');
  });

  it('insufficient_balance carries balance and cost', async () => {
    const { market } = await freshBook();
    const t = await trader(app, ws, 2);
    const res = await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 3 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'insufficient_balance', balance: 2, cost: 3 });
  });

  it('closed books accept only sells; resolved and voided books refuse every trade', async () => {
    const { markets } = await freshBook();
    const [a, b, c] = markets;
    const t = await trader(app, ws, 100);
    const bought = await trade(app, ws, t, { marketId: a.id, direction: 'higher', amount: 10 });
    await app.deps.ds.query(`UPDATE markets SET status = 'closed' WHERE id = $1`, [a.id]);
    expect((await trade(app, ws, t, { marketId: a.id, direction: 'higher', amount: 1 })).body.code).toBe('market_closed');
    const sell = await trade(app, ws, t, { marketId: a.id, direction: 'higher', sellShares: bought.body.shares / 2 });
    expect(sell.status).toBe(200);
    await inTransaction(app.deps.ds, (m) => voidBooksById(m, [b.id], 'test void', new Date()));
    expect((await trade(app, ws, t, { marketId: b.id, direction: 'lower', amount: 1 })).body.code).toBe('market_voided');
    await inTransaction(app.deps.ds, async (m) => resolveLockedMarket(m, (await lockMarket(m, c.id))!, 10, new Date()));
    const resolved = await trade(app, ws, t, { marketId: c.id, direction: 'lower', amount: 1 });
    expect(resolved.status).toBe(400);
    expect(resolved.body.code).toBe('market_resolved');
    await expectLedgerSound(app.deps);
  });
});

describe('reads', () => {
  it('lists with limit bounds, shows history, pnl, positions and the dashboard', async () => {
    const { metric, market } = await freshBook();
    const t = await trader(app, ws, 100);
    await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 10 });
    await trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 5 });
    for (const bad of ['0', '201', 'abc', '1.5']) {
      const r = await app.http.get(`/api/predictions/markets?limit=${bad}`).set('X-Workspace-Id', ws.id);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/limit/);
    }
    const one = await app.http.get(`/api/predictions/markets?metricId=${metric.id}&limit=1`).set('X-Workspace-Id', ws.id);
    expect(one.body).toHaveLength(1);
    const hist = await app.http.get(`/api/predictions/markets/${market.id}/history`).set('X-Workspace-Id', ws.id);
    expect(hist.body.points).toHaveLength(2);
    expect(hist.body.points[1].consensus).toBeGreaterThan(hist.body.points[0].consensus);
    const pnl = await app.http.get(`/api/agents/me/market-pnl`).set('X-Agent-Key', t.key);
    expect(pnl.body[0]).toMatchObject({ marketId: market.id, open: true });
    expect(pnl.body[0].netCash).toBeCloseTo(-15, 5);
    expect(pnl.body[0].pnlConsensus).toBeCloseTo(pnl.body[0].markValueConsensus - 15, 5);
    const pos = await app.http.get(`/api/agents/me/positions`).set('X-Agent-Key', t.key);
    expect(pos.body[0]).toMatchObject({ marketId: market.id, direction: 'higher', status: 'open' });
    expect(pos.body[0].profit).toBeCloseTo(pos.body[0].worth - pos.body[0].totalCost, 9);
    const dash = await app.http.get(`/api/agents/me/dashboard?limit=3`).set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id);
    expect(dash.body.balance).toBeCloseTo(85, 5);
    expect(dash.body.markets.length).toBeLessThanOrEqual(3);
    const status = await app.http.get(`/api/status?markets=1`).set('X-Workspace-Id', ws.id);
    expect(status.status).toBe(200);
    const row = status.body.metrics.find((x: any) => x.id === metric.id);
    expect(row.markets.map((x: any) => x.id)).toContain(market.id);
    expect(Object.keys(row.markets[0]).sort()).toEqual(['id', 'prediction', 'probability', 'rangeMax', 'rangeMin', 'resolvesOn', 'targetDate']);
  });
});

/** Replays the recorded trades of a book in commit order from its opening state. */
async function replayBook(marketId: string): Promise<{ replayed: BookState; actual: BookState }> {
  const [mk] = await app.deps.ds.query(`SELECT liquidity, opened_probability, q_higher, q_lower, b FROM markets WHERE id = $1`, [marketId]);
  let book = openBook(BigInt(mk.liquidity), mk.opened_probability);
  const rows = await app.deps.ds.query(`SELECT kind, direction, shares FROM trades WHERE market_id = $1 ORDER BY seq`, [marketId]);
  for (const r of rows) {
    const s = BigInt(r.shares);
    if (r.kind === 'redeem') book = { ...book, qHigher: book.qHigher - s, qLower: book.qLower - s };
    else {
      const sign = r.kind === 'buy' ? 1n : -1n;
      book = r.direction === 'higher' ? { ...book, qHigher: book.qHigher + sign * s } : { ...book, qLower: book.qLower + sign * s };
    }
  }
  return { replayed: book, actual: { qHigher: BigInt(mk.q_higher), qLower: BigInt(mk.q_lower), b: BigInt(mk.b) } };
}

describe('concurrency', () => {
  it('200 trades from 10 participants on one book and on 5 books: coded outcomes, sound ledger, books equal their replay', async () => {
    const books: any[] = [];
    for (let i = 0; i < 5; i++) books.push((await freshBook()).market);
    const traders = await Promise.all(Array.from({ length: 10 }, () => trader(app, ws, 60)));
    const pick = <T>(xs: T[], i: number) => xs[i % xs.length];
    const run = (marketFor: (i: number) => string) =>
      Promise.all(
        Array.from({ length: 200 }, (_, i) => {
          const who = pick(traders, i * 7 + 3);
          const r = i % 5;
          const body =
            r === 0 ? { direction: 'lower', sellShares: 2 } : r === 1 ? { targetValue: 300 + (i % 7) * 60, maxBudget: 4 } : { direction: i % 2 ? 'higher' : 'lower', amount: 1 + (i % 9) };
          return trade(app, ws, who, { marketId: marketFor(i), ...body });
        }),
      );
    const results = [...(await run(() => books[0].id)), ...(await run((i) => pick(books, i).id))];
    const ok = results.filter((r) => r.status === 200).length;
    for (const r of results) {
      if (r.status !== 200) {
        expect([400, 409]).toContain(r.status);
        expect(['insufficient_balance', 'insufficient_shares', 'price_moved', 'trade_too_small']).toContain(r.body.code);
      }
    }
    expect(ok).toBeGreaterThan(100);
    const neg = await app.deps.ds.query(`SELECT count(*)::int AS n FROM accounts WHERE kind = 'participant' AND balance < 0`);
    expect(neg[0].n).toBe(0);
    for (const b of books) {
      const { replayed, actual } = await replayBook(b.id);
      expect(replayed).toEqual(actual);
    }
    await expectLedgerSound(app.deps);
  });
});

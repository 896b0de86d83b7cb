import { backfillStandings } from '../../migrations/1763802300000-Standings';
import { addSums, bookScore, emptySums, type ScoreSums } from '../../src/domain/calibration';
import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { inTransaction } from '../../src/db/tx';
import { lockMarket } from '../../src/services/books';
import { cachedStanding, STANDINGS_STALE_AFTER_MS, STANDINGS_TTL_MS } from '../../src/services/standings/boardCache';
import { resolveLockedMarket } from '../../src/services/lifecycle';
import { createMetric, marketsOf, standingsAdded, trade, trader } from '../helpers/markets';

let app: TestApp;

useTestApp((a) => (app = a));
afterEach(async () => {
  await expectLedgerSound(app.deps);
});

const at = (iso: string) => app.clock.set(new Date(iso));
const owner = (ws: TestWorkspace) => ({ 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id });
/** Settle early, then wait for the standings job's work (the aggregates are read next). */
const settle = async (ws: TestWorkspace, metricId: string, value: number) => {
  const res = await app.http.post(`/api/metrics/${metricId}/settle`).set(owner(ws)).send({ value, reason: 'test' });
  if (res.status === 200) await standingsAdded(app);
  return res;
};
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

    // Exactly once: nothing is left pending, and a standings job run again for every resolved book adds nothing.
    const resolved: string[] = (await app.deps.ds.query(`SELECT id FROM markets WHERE workspace_id = $1 AND status = 'resolved'`, [ws.id])).map((r: { id: string }) => r.id);
    expect((await app.deps.ds.query(`SELECT count(*)::int AS n FROM standings_pending WHERE market_id = ANY($1)`, [resolved]))[0].n).toBe(0);
    const again = await app.deps.hub.enqueueAndWait('standings', 'record', { marketIds: resolved }, { waitMs: 30_000 });
    expect(again).toEqual({ finished: true, result: { books: 0, holders: 0 } });
    expect(await stored(ids)).toEqual(await fromScratch(ids));

    // A resolution whose job never came (resolved outside a lane job, or the enqueue lost): the book
    // stays pending, out of the aggregates, until the sweep adds it, once.
    const { book: open } = await oneBook(ws);
    expect((await trade(app, ws, traders[0], { marketId: open.id, direction: 'higher', amount: 7 })).status).toBe(200);
    const before = await stored(ids);
    await inTransaction(app.deps.ds, async (m) => resolveLockedMarket(m, (await lockMarket(m, open.id))!, 550, app.clock.now()));
    expect(await stored(ids)).toEqual(before);
    expect((await app.deps.ds.query(`SELECT count(*)::int AS n FROM standings_pending WHERE market_id = $1`, [open.id]))[0].n).toBe(1);
    expect((await standingsAdded(app)).books).toBeGreaterThanOrEqual(1); // suites share the database: maybe others' books too
    expect((await app.deps.ds.query(`SELECT count(*)::int AS n FROM standings_pending WHERE market_id = $1`, [open.id]))[0].n).toBe(0);
    expect(await app.deps.hub.enqueueAndWait('standings', 'record', { marketIds: [open.id] }, { waitMs: 30_000 })).toEqual({ finished: true, result: { books: 0, holders: 0 } });
    expect(await stored(ids)).toEqual(await fromScratch(ids));
    expect(await stored(ids)).not.toEqual(before);
    const results = await app.deps.ds.query(`SELECT count(*)::int AS n FROM participant_results WHERE agent_id = ANY($1)`, [ids]);
    const positions = await app.deps.ds.query(`SELECT count(*)::int AS n FROM positions p JOIN markets mk ON mk.id = p.market_id WHERE p.agent_id = ANY($1) AND mk.status = 'resolved'`, [ids]);
    expect(results[0].n).toBe(positions[0].n);

    // The migration's backfill (for books resolved before it) computes the same rows, to the last digit.
    const resultsBefore = await app.deps.ds.query(`SELECT * FROM participant_results WHERE agent_id = ANY($1) ORDER BY agent_id, market_id`, [ids]);
    const statsBefore = await stored(ids);
    await app.deps.ds.query(`DELETE FROM participant_results WHERE agent_id = ANY($1)`, [ids]);
    await app.deps.ds.query(`DELETE FROM participant_stats WHERE agent_id = ANY($1)`, [ids]);
    await backfillStandings(app.deps.ds, ids);
    expect(await app.deps.ds.query(`SELECT * FROM participant_results WHERE agent_id = ANY($1) ORDER BY agent_id, market_id`, [ids])).toEqual(resultsBefore);
    expect(await stored(ids)).toEqual(statsBefore);
  });
});

const NANO = 1e9;
const nano = (credits: number) => BigInt(Math.round(credits * NANO));
const onlyUntilSettled = { enabled: true, halfLife: 1, customHorizons: ['until-settled'] };

/** A fresh metric and its until-settled book (its other books stay without trades). */
async function oneBook(ws: TestWorkspace) {
  const metric = await createMetric(app, ws, { value: 500, timePreference: onlyUntilSettled });
  const book = (await marketsOf(app, ws, metric.id)).find((b) => b.targetDate === 'until-settled');
  expect(book).toBeDefined();
  return { metric, book };
}

async function buy(ws: TestWorkspace, who: { key: string }, marketId: string, direction: 'higher' | 'lower', amount: number) {
  const r = await trade(app, ws, who as any, { marketId, direction, amount });
  expect(r.status).toBe(200);
  return r.body as { shares: number; cost: number; probability: number; consensus: number };
}

const profile = (idOrNickname: string, key?: string) => {
  const req = app.http.get(`/api/agents/${encodeURIComponent(idOrNickname)}/public`);
  if (key) req.set('X-Agent-Key', key);
  return req;
};

describe('public profile', () => {
  it('every figure of a scripted history, computed by hand; a private workspace stays hidden from others', async () => {
    at('2026-12-01T10:00:00Z');
    const ws = await buildWorkspace(app, { public: true });
    const ann = await trader(app, ws, 500);
    const bob = await trader(app, ws, 500);
    const b1 = await oneBook(ws);
    const range = b1.book.rangeMax - b1.book.rangeMin;
    const t1 = await buy(ws, ann, b1.book.id, 'higher', 10);
    const t2 = await buy(ws, ann, b1.book.id, 'higher', 6);
    await buy(ws, bob, b1.book.id, 'lower', 20);
    // Resolve at v = 0.75 of the range: a higher share pays 0.75.
    at('2026-12-01T11:00:00Z');
    expect((await settle(ws, b1.metric.id, b1.book.rangeMin + 0.75 * range)).status).toBe(200);
    // An open book: Ann's 4 credits of higher, marked at the consensus her trade left.
    const b2 = await oneBook(ws);
    const t4 = await buy(ws, ann, b2.book.id, 'higher', 4);
    // Ann's own private workspace: a trade the public must not see.
    const priv = await buildWorkspace(app, { owner: ann, public: false, ownerCredits: 1000 });
    const pm = await createMetric(app, priv, { value: 500, timePreference: onlyUntilSettled });
    const pBook = (await marketsOf(app, priv, pm.id)).find((b) => b.targetDate === 'until-settled');
    await buy(priv, ann, pBook.id, 'lower', 3);
    expect((await app.http.post('/api/agents/transfer').set('X-Agent-Key', ann.key).send({ toAgent: bob.id, amount: 2, memo: 'thanks' })).status).toBe(200);

    // By hand. Settled: 0.75 per higher share held, minus the 16 credits paid (one floor in nano).
    const annShares = nano(t1.shares) + nano(t2.shares);
    const settledNano = (annShares * 3n) / 4n - nano(t1.cost) - nano(t2.cost);
    // Open: 4 credits bought t4.shares higher shares, worth t4.probability each.
    const openCredits = t4.shares * t4.probability - t4.cost;
    const errs = [t1.probability, t2.probability].map((p) => p - 0.75);
    const brier = errs.reduce((s, e) => s + e * e, 0) / 2;
    const mae = errs.reduce((s, e) => s + Math.abs(e), 0) / 2;

    const anon = await profile(ann.nickname.toUpperCase());
    expect(anon.status).toBe(200);
    const p = anon.body;
    expect(p.id).toBe(ann.id);
    expect(p.stats.settledEarnings).toBe(Number(settledNano) / NANO);
    expect(p.stats.openEarnings).toBeCloseTo(openCredits, 8);
    expect(p.stats.totalEarnings).toBeCloseTo(p.stats.settledEarnings + p.stats.openEarnings, 9);
    expect(p.stats.calibration).toBeCloseTo(1 - brier, 8);
    expect(p.stats.accuracy).toBeCloseTo(1 - mae, 8);
    expect(p.stats.resolvedMarkets).toBe(1);
    // Public workspaces only: 3 trades (two resolved, one open), 20 credits of volume; the private trade is left out.
    expect(p.stats.totalTrades).toBe(3);
    expect(p.stats.tradedVolume).toBeCloseTo(20, 9);
    expect(p.stats.rank).toBeGreaterThanOrEqual(1);
    const usedBins = p.stats.calibrationBins.filter((b: any) => b.trades > 0);
    expect(usedBins.reduce((n: number, b: any) => n + b.trades, 0)).toBe(2);
    for (const b of usedBins) expect(b.meanOutcome).toBe(0.75);
    expect(p.activeWorkspaces).toEqual([{ id: ws.id, name: expect.any(String) }]);
    expect(p.openPositions.map((o: any) => o.marketId)).toEqual([b2.book.id]);
    expect(p.openPositions[0]).toMatchObject({ direction: 'higher', totalCost: t4.cost, status: 'open', workspaceId: ws.id });
    expect(p.openPositions[0].profit).toBeCloseTo(openCredits, 8);
    expect(p.recentTrades.map((t: any) => t.marketId)).toEqual([b2.book.id, b1.book.id, b1.book.id]);
    expect(p.recentTrades[0]).toMatchObject({ kind: 'buy', direction: 'higher', cost: t4.cost, consensusAfter: t4.consensus });
    expect(p.recentTrades[0].price).toBeCloseTo(t4.cost / t4.shares, 9);
    // Balance history and transfers follow private workspaces and carry memos: the private view's only (issue 57).
    expect(p.transfers).toEqual([]);
    expect(p.balanceHistory).toEqual([]);
    expect(p.profitHistory).toEqual([{ at: '2026-12-01T11:00:00.000Z', profit: p.stats.settledEarnings }]);
    expect(p.pnlHistory).toEqual([{ at: '2026-12-01T11:00:00.000Z', cumulative: p.stats.settledEarnings }]);
    expect(p).toMatchObject({ bot: false, bots: [], withBotsEarnings: null, parent: null, children: [] });
    expect(p).not.toHaveProperty('walletAddress');
    expect(p).not.toHaveProperty('notifications');

    // Bob has no read in Ann's private workspace: the same as anonymous.
    const byBob = (await profile(ann.id, bob.key)).body;
    expect(byBob.recentTrades).toHaveLength(3);
    expect(byBob).not.toHaveProperty('notifications');
    // Ann herself, and the master key: the private trade and position too, and her private fields.
    const self = (await profile(ann.id, ann.key)).body;
    expect(self.recentTrades).toHaveLength(4);
    expect(self.recentTrades[0].workspaceId).toBe(priv.id);
    expect(self.openPositions.map((o: any) => o.workspaceId).sort()).toEqual([ws.id, priv.id].sort());
    expect(self.stats).toEqual(p.stats);
    expect(self).toMatchObject({ walletAddress: null, notifications: expect.any(Object) });
    expect(self.transfers).toEqual([{ id: expect.any(String), direction: 'out', counterparty: { id: bob.id, nickname: bob.nickname }, credits: 2, memo: 'thanks', createdAt: expect.any(String) }]);
    expect(self.balanceHistory.at(-1).balance).toBe(self.balance);
    expect(byBob.transfers).toEqual([]);
    const master = (await app.http.get(`/api/agents/${ann.id}/public`).set('X-API-Key', app.masterKey)).body;
    expect(master.recentTrades).toHaveLength(4);
    // Where a viewer may read comes from the access policy, key scopes included: Ann's own key that may not read sees what the public sees.
    const accountOnly = await app.http.post(`/api/agents/${ann.id}/keys`).set('X-Agent-Key', ann.key).send({ label: 'account only', scopes: ['account:read'] });
    expect(accountOnly.status).toBe(201);
    const byAccountOnly = (await profile(ann.id, accountOnly.body.apiKey)).body;
    expect(byAccountOnly.recentTrades).toHaveLength(3);
    expect(byAccountOnly.openPositions.map((o: any) => o.workspaceId)).toEqual([ws.id]);

    // The same aggregates behind GET /agents/mine (every workspace: the private trade counts) and GET /agents (one workspace).
    const mine = (await app.http.get('/api/agents/mine').set('X-Agent-Key', ann.key)).body;
    expect(mine[0]).toMatchObject({ id: ann.id, settledEarnings: p.stats.settledEarnings, totalTrades: 4, lastTradeAt: self.recentTrades[0].createdAt });
    expect(mine[0].earned).toBeCloseTo(mine[0].settledEarnings + mine[0].openEarnings, 9);
    const members = (await app.http.get('/api/agents').set(owner(ws))).body;
    const annRow = members.find((r: any) => r.id === ann.id);
    expect(annRow.realizedPnl).toBe(p.stats.settledEarnings);
    expect(annRow.pnlConsensus).toBeCloseTo(p.stats.totalEarnings, 8);

    // A bot of Ann's: listed with its earnings; withBotsEarnings adds them.
    const made = await app.http.post('/api/agents').set('X-Agent-Key', ann.key).send({ nickname: `bot-${ann.nickname}`.slice(0, 30) });
    expect(made.status).toBe(201);
    const withBot = (await profile(ann.id)).body;
    expect(withBot.bots).toEqual([{ id: made.body.agentId, nickname: made.body.nickname, parentId: ann.id, totalEarnings: 0, totalTrades: 0 }]);
    expect(withBot.withBotsEarnings).toBe(withBot.stats.totalEarnings);
    const botView = (await profile(made.body.agentId, ann.key)).body;
    expect(botView).toMatchObject({ bot: true, parent: { id: ann.id }, owner: { id: ann.id }, runBy: ann.nickname, walletAddress: null });
    expect((await profile(made.body.agentId, bob.key)).body).not.toHaveProperty('walletAddress');

    expect((await profile('no-such-participant')).status).toBe(404);
  });
});

describe('leaderboard and seasons', () => {
  it('ties share a rank, the minimum of resolved markets filters, sorts and pagination; a season counts only its period and freezes at its end', async () => {
    at('2027-01-10T10:00:00Z');
    const ws = await buildWorkspace(app, { public: true });
    const [carl, dan, eve] = await Promise.all([0, 1, 2].map(() => trader(app, ws, 500)));
    // Four identical fresh books: Carl and Dan each buy 10 higher on two, Eve on one.
    const books = [];
    for (let i = 0; i < 5; i++) books.push(await oneBook(ws));
    const spent = [];
    for (const [i, who] of [carl, carl, dan, dan, eve].entries()) spent.push(await buy(ws, who, books[i].book.id, 'higher', 10));
    expect(spent[0].shares).toBe(spent[2].shares);
    for (const b of books.slice(0, 4)) expect((await settle(ws, b.metric.id, b.book.rangeMin + 0.5 * (b.book.rangeMax - b.book.rangeMin))).status).toBe(200);
    at('2027-01-20T10:00:00Z');
    expect((await settle(ws, books[4].metric.id, books[4].book.rangeMax)).status).toBe(200);

    const board = async (q: string) => {
      const r = await app.http.get(`/api/leaderboard?workspaceId=${ws.id}&${q}`);
      expect(r.status).toBe(200);
      return r.body;
    };
    // By hand: each holds 2 x shares of one 10-credit buy paying 0.5 each; Eve 1 book paying 1.
    const each = Number((2n * ((nano(spent[0].shares) * 1n) / 2n - nano(10))) ) / NANO;
    const eveEarned = Number(nano(spent[4].shares) - nano(10)) / NANO;
    const all = await board('sort=earnings');
    expect(all.total).toBe(3);
    const tied = [carl, dan].sort((a, b) => (a.nickname < b.nickname ? -1 : 1));
    const expected = [
      ...tied.map((a) => ({ rank: eveEarned > each ? 2 : 1, agent: { id: a.id, nickname: a.nickname }, earnings: each, resolvedMarkets: 2, trades: 2 })),
      { rank: eveEarned > each ? 1 : 3, agent: { id: eve.id, nickname: eve.nickname }, earnings: eveEarned, resolvedMarkets: 1, trades: 1 },
    ].sort((a, b) => a.rank - b.rank);
    expect(all.rows.map((r: any) => ({ rank: r.rank, agent: r.agent, earnings: r.earnings, resolvedMarkets: r.resolvedMarkets, trades: r.trades }))).toEqual(expected);
    // The minimum of resolved markets: Eve (1) is not ranked at 2.
    const min2 = await board('minResolvedMarkets=2');
    expect(min2.rows.map((r: any) => [r.rank, r.agent.id])).toEqual(tied.map((a) => [1, a.id]));
    // Pagination.
    const page = await board('limit=1&offset=1');
    expect(page).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.rows.map((r: any) => r.agent.id)).toEqual([all.rows[1].agent.id]);
    expect((await board('limit=5&offset=10')).total).toBe(3);
    // Calibration: Eve's trade left p above 0.5 and the book paid 1; Carl's and Dan's the same p against 0.5.
    const cal = await board('sort=calibration');
    const pErr = (p: number, v: number) => 1 - (p - v) ** 2;
    expect(cal.rows.find((r: any) => r.agent.id === eve.id).calibration).toBeCloseTo(pErr(spent[4].probability, 1), 8);
    expect(cal.rows.find((r: any) => r.agent.id === carl.id).calibration).toBeCloseTo(pErr(spent[0].probability, 0.5), 8);
    const calOrder = [...cal.rows].sort((a: any, b: any) => b.calibration - a.calibration).map((r: any) => r.agent.id);
    expect(cal.rows.map((r: any) => r.agent.id)).toEqual(calOrder);
    expect((await board('sort=volume')).rows.every((r: any) => r.volume === r.trades * 10)).toBe(true);
    expect((await app.http.get('/api/leaderboard?sort=luck')).status).toBe(400);

    // Seasons: the master key creates one over the first period, after the fact (its standings are counted
    // from the books already resolved), and one for what comes next.
    const anon = await app.http.post('/api/seasons').set('X-Agent-Key', carl.key).send({ name: 'x', startsAt: '2027-01-01T00:00:00Z', endsAt: '2027-01-15T00:00:00Z' });
    expect(anon.status).toBe(403);
    const s1 = await app.http.post('/api/seasons').set('X-API-Key', app.masterKey).send({ name: 'January A', startsAt: '2027-01-01T00:00:00Z', endsAt: '2027-01-15T00:00:00Z' });
    expect(s1.status).toBe(201);
    expect(s1.body).toMatchObject({ name: 'January A', status: 'ended' });
    const s2 = await app.http.post('/api/seasons').set('X-API-Key', app.masterKey).send({ name: 'January B', startsAt: '2027-01-15T00:00:00Z', endsAt: '2027-02-01T00:00:00Z' });
    expect(s2.body.status).toBe('active');
    const season = async (id: string, q = '') => (await app.http.get(`/api/seasons/${id}?workspaceId=${ws.id}${q}`)).body;
    const first = await season(s1.body.id);
    expect(first.frozen).toBe(true);
    expect(first.standings.rows.map((r: any) => [r.rank, r.agent.id, r.earnings])).toEqual(tied.map((a) => [1, a.id, each]));
    // Eve's book resolved on the 20th: season B had not been created then; it is counted when created.
    expect((await season(s2.body.id)).standings.rows.map((r: any) => r.agent.id)).toEqual([eve.id]);
    // A book resolving now adds to season B as it resolves, and never to the ended season A.
    const late = await oneBook(ws);
    await buy(ws, carl, late.book.id, 'lower', 5);
    at('2027-01-25T10:00:00Z');
    expect((await settle(ws, late.metric.id, late.book.rangeMin)).status).toBe(200);
    expect(await season(s1.body.id)).toEqual(first);
    const second = await season(s2.body.id);
    expect(second.standings.rows.map((r: any) => r.agent.id).sort()).toEqual([carl.id, eve.id].sort());
    expect(second.standings.rows.find((r: any) => r.agent.id === carl.id).resolvedMarkets).toBe(1);
    // Editing a season's period recounts it: season A stretched to the end of January holds everything.
    const edited = await app.http.put(`/api/seasons/${s1.body.id}`).set('X-API-Key', app.masterKey).send({ endsAt: '2027-02-01T00:00:00Z' });
    expect(edited.body.status).toBe('active');
    const whole = await season(s1.body.id, '&limit=10');
    const allTime = await board('limit=10');
    expect(whole.standings.rows).toEqual(allTime.rows);
    const list = (await app.http.get('/api/seasons')).body;
    expect(list.map((s: any) => s.id)).toEqual(expect.arrayContaining([s1.body.id, s2.body.id]));
    expect((await app.http.get('/api/seasons/00000000-0000-0000-0000-000000000000')).status).toBe(404);
  });
});

describe('marketplace stats and benchmark', () => {
  it('a board that was slow to compute is answered as it was past its TTL while the next one computes; a cheap one is computed again first', async () => {
    const slow = (value: string) => async () => {
      await new Promise((r) => setTimeout(r, STANDINGS_STALE_AFTER_MS + 50));
      return value;
    };
    const key = `test-board-${Date.now()}`;
    expect(await cachedStanding(app.deps.ds, key, slow('first'))).toBe('first');
    await new Promise((r) => setTimeout(r, STANDINGS_TTL_MS + 50));
    const started = performance.now();
    expect(await cachedStanding(app.deps.ds, key, slow('second'))).toBe('first');
    expect(performance.now() - started).toBeLessThan(STANDINGS_STALE_AFTER_MS);
    let now = 'first';
    for (let i = 0; i < 40 && now === 'first'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      now = await cachedStanding(app.deps.ds, key, slow('third'));
    }
    expect(now).toBe('second');
    // A cheap board past its TTL is computed again before it is answered.
    const cheap = `test-cheap-${Date.now()}`;
    expect(await cachedStanding(app.deps.ds, cheap, async () => 'one')).toBe('one');
    await new Promise((r) => setTimeout(r, STANDINGS_TTL_MS + 50));
    expect(await cachedStanding(app.deps.ds, cheap, async () => 'two')).toBe('two');
  }, 30_000);

  it('platform-wide totals are kept PLATFORM_TOTALS_TTL_MS, then answered while they refresh in the background, and say when they were computed; pages stay live', async () => {
    const config = app.deps.config as { PLATFORM_TOTALS_TTL_MS: number };
    config.PLATFORM_TOTALS_TTL_MS = 60_000;
    try {
      const first = (await app.http.get('/api/marketplace/stats?limit=1000').expect(200)).body;
      const ws = await buildWorkspace(app, { public: true });
      const again = (await app.http.get('/api/marketplace/stats?limit=1000').expect(200)).body;
      // The totals are the kept ones (same asOf, same count); the page already lists the new workspace.
      expect(again.overall.asOf).toBe(first.overall.asOf);
      expect(again.overall.workspaces).toBe(first.overall.workspaces);
      expect(again.workspaces.some((w: any) => w.id === ws.id)).toBe(true);
      // Past the TTL the kept totals are still answered while the next ones compute in the background.
      config.PLATFORM_TOTALS_TTL_MS = 1;
      await new Promise((r) => setTimeout(r, 20));
      const stale = (await app.http.get('/api/marketplace/stats?limit=1000').expect(200)).body;
      expect(stale.overall.workspaces).toBe(first.overall.workspaces);
      config.PLATFORM_TOTALS_TTL_MS = 60_000;
      let refreshed = stale;
      for (let i = 0; i < 100 && refreshed.overall.workspaces === first.overall.workspaces; i++) {
        await new Promise((r) => setTimeout(r, 50));
        refreshed = (await app.http.get('/api/marketplace/stats?limit=1000').expect(200)).body;
      }
      // Other suites create public workspaces in this database at the same time: the refreshed totals
      // count ours at least (and whatever landed meanwhile), never the kept figure again.
      expect(refreshed.overall.workspaces).toBeGreaterThanOrEqual(first.overall.workspaces + 1);
      config.PLATFORM_TOTALS_TTL_MS = 0;
      const fresh = (await app.http.get('/api/marketplace/stats?limit=1000').expect(200)).body;
      expect(fresh.overall.workspaces).toBeGreaterThanOrEqual(refreshed.overall.workspaces);
      expect(Date.parse(fresh.overall.asOf)).toBeGreaterThanOrEqual(Date.parse(first.overall.asOf));
    } finally {
      config.PLATFORM_TOTALS_TTL_MS = 0;
    }
  });

  it('per public workspace, by hand: volume, open books, participants, decided proposals; the final consensus error by horizon', async () => {
    at(new Date().toISOString());
    const ws = await buildWorkspace(app, { public: true });
    const hidden = await buildWorkspace(app, { public: false });
    await createMetric(app, hidden, { value: 100, timePreference: onlyUntilSettled });
    const ann = await trader(app, ws, 500);
    const { metric, book } = await oneBook(ws);
    const books = await marketsOf(app, ws, metric.id);
    const t1 = await buy(ws, ann, book.id, 'higher', 10);
    const t2 = await buy(ws, ann, book.id, 'lower', 4);
    // A workspace without metrics: its proposal opens no books; declined, it counts as decided.
    const quiet = await buildWorkspace(app, { public: true });
    const proposal = await app.http.post('/api/proposals').set(owner(quiet)).send({ title: 'Try it', liquidity: 10 });
    expect(proposal.status).toBe(200);
    expect((await app.http.post(`/api/proposals/${proposal.body.id}/decline`).set(owner(quiet)).send({})).status).toBe(200);

    // Every page of public workspaces (issue 60: a page at a time, name order), walked with a small
    // page so the cursor is exercised; the overall figures are the same on every page. They are
    // computed live here (PLATFORM_TOTALS_TTL_MS 0) over a database other suites write at the same
    // time, so a walk that a concurrent write lands in is walked again, after a pause (at most nine more
    // times: the fuzz suites write in bursts).
    const allPages = async (path: string, tries = 10): Promise<any> => {
      let cursor: string | null = null;
      let first: any = null;
      const workspaces: any[] = [];
      do {
        const r: any = await app.http.get(`${path}?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
        expect(r.status).toBe(200);
        expect(r.body.workspaces.length).toBeLessThanOrEqual(7);
        if (first && tries > 1 && JSON.stringify({ ...r.body.overall, asOf: null }) !== JSON.stringify({ ...first.overall, asOf: null })) {
          await new Promise((done) => setTimeout(done, 150));
          return allPages(path, tries - 1);
        }
        if (first) expect({ ...r.body.overall, asOf: null }).toEqual({ ...first.overall, asOf: null });
        first ??= r.body;
        workspaces.push(...r.body.workspaces);
        cursor = r.body.nextCursor;
      } while (cursor);
      const names = workspaces.map((w) => `${w.name}\u0000${w.id}`);
      expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(new Set(workspaces.map((w) => w.id)).size).toBe(workspaces.length);
      return { ...first, workspaces };
    };
    const stats = () => allPages('/api/marketplace/stats');
    const before = await stats();
    const mine = before.workspaces.find((w: any) => w.id === ws.id);
    // Volume: the two buys' costs; open books: the metric's; members: the owner and Ann.
    expect(mine).toMatchObject({ openBooks: books.length, participants: 2, proposalsDecided: 0 });
    expect(before.workspaces.find((w: any) => w.id === quiet.id)).toMatchObject({ volume: 0, openBooks: 0, participants: 1, proposalsDecided: 1 });
    expect(mine.volume).toBeCloseTo(t1.cost + t2.cost, 9);
    expect(before.workspaces.some((w: any) => w.id === hidden.id)).toBe(false);
    expect(before.overall.openBooks).toBe(before.workspaces.reduce((n: number, w: any) => n + w.openBooks, 0));
    expect(before.overall.proposalsDecided).toBe(before.workspaces.reduce((n: number, w: any) => n + w.proposalsDecided, 0));
    expect(before.overall.workspaces).toBe(before.workspaces.length);
    expect(before.overall.volume).toBeCloseTo(before.workspaces.reduce((n: number, w: any) => n + w.volume, 0), 6);
    expect((await app.http.get('/api/marketplace/stats?cursor=bm9wZQ')).body.code).toBe('validation_failed');
    expect((await app.http.get('/api/benchmark?limit=0')).status).toBe(400);

    // Resolve at 800 on 0..1000: untraded books end at their opening consensus, the traded one where Ann left it.
    const bench0 = await allPages('/api/benchmark');
    expect(bench0.workspaces.find((w: any) => w.id === ws.id).meanAbsErrorByHorizon.every((h: any) => h.books === 0)).toBe(true);
    expect((await settle(ws, metric.id, 800)).status).toBe(200);
    const errors = books.map((b: any) => Math.abs((b.id === book.id ? t2.consensus : b.consensus) - 800) / (b.rangeMax - b.rangeMin));
    const bench = { body: await allPages('/api/benchmark') };
    const decidedSum = bench.body.workspaces.reduce((n: number, x: any) => n + x.scorecard.decided, 0);
    expect(bench.body.overall.scorecard.decided).toBe(decidedSum);
    const w = bench.body.workspaces.find((x: any) => x.id === ws.id);
    expect(w.meanAbsErrorByHorizon.find((h: any) => h.horizon === 'day')).toEqual({ horizon: 'day', books: books.length, meanAbsError: expect.any(Number) });
    expect(w.meanAbsErrorByHorizon.find((h: any) => h.horizon === 'day').meanAbsError).toBeCloseTo(errors.reduce((s: number, e: number) => s + e, 0) / errors.length, 8);
    expect(w.meanAbsErrorByHorizon.filter((h: any) => h.horizon !== 'day').every((h: any) => h.books === 0 && h.meanAbsError === null)).toBe(true);
    // No proposal branch resolved under a decision: no hit rate yet.
    expect(w.scorecard).toMatchObject({ decided: 0, hitRate: null });
    expect(bench.body.workspaces.some((x: any) => x.id === hidden.id)).toBe(false);
    // A private workspace has no public standings: as if it did not exist.
    expect((await app.http.get(`/api/leaderboard?workspaceId=${hidden.id}`)).status).toBe(404);
    expect((await app.http.get(`/api/leaderboard?workspaceId=${ws.slug}`)).body.total).toBe(1);
    expect((await stats()).workspaces.find((x: any) => x.id === ws.id).openBooks).toBe(0);
  });
});

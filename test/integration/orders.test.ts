import { inTransaction } from '../../src/db/tx';
import { expireDueOrders } from '../../src/services/trading';
import { lockMarket } from '../../src/services/books';
import { resolveLockedMarket, retireBooks, voidBooksById, type LiveBook } from '../../src/services/lifecycle';
import { buildWorkspace, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { balanceOf, createMetric, freshBookId, marketsOf, trade, trader } from '../helpers/markets';
import { deleteAndWait } from '../helpers/deletions';

let app: TestApp;
let ws: TestWorkspace;

useTestApp((a) => (app = a));
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});
afterEach(async () => expectLedgerSound(app.deps));

const book = () => freshBookId(app, ws);

function place(who: TestAgent, body: Record<string, unknown>, key?: string) {
  const req = app.http.post('/api/predictions/orders').set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id);
  if (key) req.set('Idempotency-Key', key);
  return req.send(body);
}
const getOrder = (who: TestAgent, id: string) => app.http.get(`/api/predictions/orders/${id}`).set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id);
const cancel = (who: TestAgent, id: string) => app.http.delete(`/api/predictions/orders/${id}`).set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id);

describe('limit orders', () => {
  it('a resting order reserves its worst case; cancelling returns it; a second cancel is 409', async () => {
    const marketId = await book();
    const a = await trader(app, ws, 100);
    const res = await place(a, { marketId, direction: 'higher', limit: 400, shares: 10 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'open', shares: 10, filled: 0, reserved: 4, limit: 400, price: 0.4, immediate: { shares: 0 } });
    expect(await balanceOf(app, a)).toBeCloseTo(96, 9);
    const ob = await app.http.get(`/api/predictions/markets/${marketId}/orderbook`).set('X-Workspace-Id', ws.id);
    expect(ob.body).toEqual({ marketId, higher: [{ limit: 400, probability: 0.4, shares: 10, orders: 1 }], lower: [] });
    const c = await cancel(a, res.body.id);
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ status: 'cancelled', returned: 4, reserved: 0 });
    expect(await balanceOf(app, a)).toBeCloseTo(100, 9);
    expect((await cancel(a, res.body.id)).body.code).toBe('order_not_open');
    const list = await app.http.get(`/api/predictions/orders?marketId=${marketId}&status=cancelled`).set('X-Agent-Key', a.key).set('X-Workspace-Id', ws.id);
    expect(list.body.map((o: { id: string }) => o.id)).toEqual([res.body.id]);
  });

  it('a wall stops the price, fills at its limit, then the book goes on; partly consumed walls stay open', async () => {
    const marketId = await book();
    const a = await trader(app, ws, 100);
    const b = await trader(app, ws, 1000);
    const o = (await place(a, { marketId, direction: 'higher', limit: 400, shares: 10 })).body;
    // A buy of lower that would pass 400: the book moves to 400, the wall sells it 4 lower pairs' halves.
    const dry = await trade(app, ws, b, { marketId, direction: 'lower', amount: 40, limit: 400, dryRun: true });
    expect(dry.body.limitFills).toHaveLength(1);
    const t = await trade(app, ws, b, { marketId, direction: 'lower', amount: 40, limit: 400 });
    expect(t.status).toBe(200);
    expect(t.body.consensus).toBeCloseTo(400, 4);
    expect(t.body.limitFills).toEqual([{ orderId: o.id, shares: 10, price: 400, cost: 6 }]);
    expect(dry.body.limitFills).toEqual(t.body.limitFills);
    const after = (await getOrder(a, o.id)).body;
    expect(after).toMatchObject({ status: 'filled', filled: 10, spent: 4, reserved: 0 });
    // The owner holds 10 higher; the book did not move by the wall's 10 pairs.
    const mk = (await app.http.get(`/api/predictions/markets/${marketId}`).set('X-Workspace-Id', ws.id)).body;
    expect(mk.prediction ?? mk.consensus).toBeCloseTo(400, 4);

    // A second wall, partly consumed by a small buy.
    const o2 = (await place(a, { marketId, direction: 'higher', limit: 350, shares: 20 })).body;
    const t2 = await trade(app, ws, b, { marketId, direction: 'lower', amount: 25, limit: 350 });
    expect(t2.body.limitFills).toEqual([{ orderId: o2.id, shares: expect.any(Number), price: 350, cost: expect.any(Number) }]);
    const small = await trade(app, ws, b, { marketId, direction: 'lower', amount: 1 });
    expect(small.body.consensus).toBeCloseTo(350, 4); // the wall holds the price
    const partly = (await getOrder(a, o2.id)).body;
    expect(partly.status).toBe('open');
    expect(partly.filled).toBeGreaterThan(0);
    expect(partly.filled).toBeLessThan(20);
  });

  it('several walls: nearest price first, then time; a guard stops before a wall', async () => {
    const marketId = await book();
    const [a1, a2, a3] = [await trader(app, ws, 100), await trader(app, ws, 100), await trader(app, ws, 100)];
    const b = await trader(app, ws, 1000);
    const far = (await place(a1, { marketId, direction: 'higher', limit: 400, shares: 5 })).body;
    const later = (await place(a2, { marketId, direction: 'higher', limit: 400, shares: 5 })).body;
    const near = (await place(a3, { marketId, direction: 'higher', limit: 450, shares: 5 })).body;
    const guarded = await trade(app, ws, b, { marketId, direction: 'lower', amount: 50, limit: 460 });
    expect(guarded.body.limitFills).toEqual([]);
    expect(guarded.body.consensus).toBeCloseTo(460, 4);
    const t = await trade(app, ws, b, { marketId, direction: 'lower', amount: 50, limit: 400 });
    expect(t.body.limitFills.map((f: { orderId: string }) => f.orderId)).toEqual([near.id, far.id, later.id]);
    expect(t.body.limitFills.map((f: { price: number }) => f.price)).toEqual([450, 400, 400]);
  });

  it("one participant's opposing orders are matched, and the pairs redeemed", async () => {
    const marketId = await book();
    const a = await trader(app, ws, 100);
    const o = (await place(a, { marketId, direction: 'higher', limit: 450, shares: 10 })).body;
    const t = await trade(app, ws, a, { marketId, direction: 'lower', amount: 40, limit: 450 });
    expect(t.status).toBe(200);
    expect(t.body.limitFills[0]).toMatchObject({ orderId: o.id, shares: 10 });
    expect(t.body.redeemed).toBeGreaterThanOrEqual(10);
  });

  it('a crossed limit fills against the book at once and rests the rest; Idempotency-Key replays', async () => {
    const marketId = await book();
    const a = await trader(app, ws, 100);
    const first = await place(a, { marketId, direction: 'higher', limit: 550, amount: 20 }, 'k1');
    expect(first.status).toBe(200);
    expect(first.body.immediate.shares).toBeGreaterThan(0);
    expect(first.body.filled).toBe(first.body.immediate.shares);
    const again = await place(a, { marketId, direction: 'higher', limit: 550, amount: 20 }, 'k1');
    expect(again.body).toMatchObject({ id: first.body.id, idempotentReplay: true });
    expect((await place(a, { marketId, direction: 'higher', limit: 560, amount: 20 }, 'k1')).body.code).toBe('idempotency_key_reuse');
    const mk = (await app.http.get(`/api/predictions/markets/${marketId}`).set('X-Workspace-Id', ws.id)).body;
    expect(mk.probability).toBeCloseTo(0.55, 6);
  });

  it('expiry (the sweep) and a void return the reserves', async () => {
    const marketId = await book();
    const a = await trader(app, ws, 100);
    const exp = (await place(a, { marketId, direction: 'lower', limit: 600, shares: 10, expiresAt: new Date(app.clock.now().getTime() + 3_600_000).toISOString() })).body;
    const rest = (await place(a, { marketId, direction: 'lower', limit: 700, shares: 10 })).body;
    expect(await balanceOf(app, a)).toBeCloseTo(100 - 4 - 3, 9);
    app.clock.advance(3_600_001);
    expect(await expireDueOrders(app.deps)).toBe(1);
    expect((await getOrder(a, exp.id)).body.status).toBe('expired');
    expect(await balanceOf(app, a)).toBeCloseTo(97, 9);
    await inTransaction(app.deps.ds, (m) => voidBooksById(m, [marketId], 'test', app.clock.now()));
    expect((await getOrder(a, rest.id)).body).toMatchObject({ status: 'cancelled', closeReason: 'market voided' });
    expect(await balanceOf(app, a)).toBeCloseTo(100, 9);
  });

  it('shares bought at a wall can all be sold back to the book (no 500): priced as the same sale, the pool still covers every holder', async () => {
    const marketId = await book();
    const a = await trader(app, ws, 100);
    const b = await trader(app, ws, 100);
    await place(a, { marketId, direction: 'lower', limit: 600, shares: 10 });
    const t = await trade(app, ws, b, { marketId, direction: 'higher', amount: 50, limit: 600 });
    expect(t.body.limitFills).toEqual([expect.objectContaining({ shares: 10, price: 600 })]);
    const held = t.body.position.shares;
    // More higher shares than the book ever sold: the market maker takes them all at its prices.
    const dry = await trade(app, ws, b, { marketId, direction: 'higher', sellShares: held, dryRun: true });
    expect(dry.status).toBe(200);
    const sold = await trade(app, ws, b, { marketId, direction: 'higher', sellShares: held });
    expect(sold.status).toBe(200);
    expect(sold.body).toMatchObject({ kind: 'sell', shares: held, position: { direction: null, shares: 0 }, proceeds: dry.body.proceeds });
    // Net of the wall's 10 shares the book is 10 higher short of where it opened: p = 1/(1 + e^(10/b)), b = 100/ln 2.
    expect(sold.body.probability).toBeCloseTo(1 / (1 + 2 ** 0.1), 9);
    expect(sold.body.proceeds).toBeLessThan(t.body.cost);
    // A limited sell of wall shares stops at its guard like any sell.
    const c = await trader(app, ws, 100);
    await place(a, { marketId, direction: 'lower', limit: 520, shares: 10 });
    const t2 = await trade(app, ws, c, { marketId, direction: 'higher', amount: 30, limit: 520 });
    expect(t2.body.limitFills).toHaveLength(1);
    const guarded = await trade(app, ws, c, { marketId, direction: 'higher', sellShares: t2.body.position.shares, limit: 490 });
    expect(guarded.status).toBe(200);
    expect(guarded.body.consensus).toBeCloseTo(490, 4);
    expect(guarded.body.sharesKept).toBeGreaterThan(0);
    await expectLedgerSound(app.deps);
    // The wall's owner holds 20 lower; resolving at the low end pays them in full from the pool.
    const before = await balanceOf(app, a);
    await inTransaction(app.deps.ds, async (m) => resolveLockedMarket(m, (await lockMarket(m, marketId))!, 0, app.clock.now()));
    expect((await balanceOf(app, a)) - before).toBeCloseTo(20, 9);
  });

  it('an order expires by its own delayed job; the scheduled sweep expires one whose job is not due', async () => {
    const marketId = await book();
    const a = await trader(app, ws, 100);
    const soon = (await place(a, { marketId, direction: 'higher', limit: 400, shares: 10, expiresAt: new Date(app.clock.now().getTime() + 800).toISOString() })).body;
    expect(soon.status).toBe('open');
    // Polled, not timed: the delayed job on the market's lane closes it (nothing else runs the sweep here).
    let status = soon.status;
    for (let i = 0; i < 100 && status === 'open'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await getOrder(a, soon.id)).body.status;
    }
    expect(status).toBe('expired');
    expect(await balanceOf(app, a)).toBeCloseTo(100, 9);
    // An order whose delayed job is an hour away: the cron's sweep job expires it once the clock passes.
    const later = (await place(a, { marketId, direction: 'higher', limit: 400, shares: 10, expiresAt: new Date(app.clock.now().getTime() + 3_600_000).toISOString() })).body;
    app.clock.advance(3_600_001);
    const swept = await app.deps.hub.enqueueAndWait('horizons', 'expireOrders', {}, { jobId: `expire-orders-test-${later.id}`, waitMs: 10_000 });
    expect(swept).toEqual({ finished: true, result: { expired: 1 } });
    expect((await getOrder(a, later.id)).body).toMatchObject({ status: 'expired', reserved: 0 });
    expect(await balanceOf(app, a)).toBeCloseTo(100, 9);
  });

  it('a deactivated book and a deleted workspace cancel their resting orders and return the reserves', async () => {
    const marketId = await book();
    const a = await trader(app, ws, 100);
    const b = await trader(app, ws, 100);
    await trade(app, ws, b, { marketId, direction: 'higher', amount: 1 }); // traded: retiring deactivates rather than voids
    const o = (await place(a, { marketId, direction: 'lower', limit: 700, shares: 10 })).body;
    expect(await balanceOf(app, a)).toBeCloseTo(97, 9);
    const r = await inTransaction(app.deps.ds, (m) => retireBooks(m, [{ id: marketId } as LiveBook], app.clock.now()));
    expect(r).toEqual({ deactivated: 1, voided: 0 });
    expect((await getOrder(a, o.id)).body).toMatchObject({ status: 'cancelled', closeReason: 'market deactivated', reserved: 0 });
    expect(await balanceOf(app, a)).toBeCloseTo(100, 9);

    const other = await buildWorkspace(app, { public: true, ownerCredits: 1000 });
    const metric = await createMetric(app, other, { value: 500 });
    const otherMarket = (await marketsOf(app, other, metric.id))[0].id;
    const c = await trader(app, other, 50);
    const res = await app.http.post('/api/predictions/orders').set('X-Agent-Key', c.key).set('X-Workspace-Id', other.id).send({ marketId: otherMarket, direction: 'higher', limit: 300, shares: 10 });
    expect(res.status).toBe(200);
    expect(await balanceOf(app, c)).toBeCloseTo(47, 9);
    await deleteAndWait(app, `/api/workspaces/${other.id}`, { 'X-Agent-Key': other.owner.key });
    expect(await balanceOf(app, c)).toBeCloseTo(50, 9);
    const [acc] = await app.deps.ds.query(`SELECT balance::text AS b FROM accounts WHERE id = $1`, [`reserve:${otherMarket}`]);
    expect(acc.b).toBe('0');
  });

  it('an order names its market like a trade: metric (id or name) + targetDate', async () => {
    const metric = await createMetric(app, ws, { value: 500 });
    const mk = (await marketsOf(app, ws, metric.id))[0];
    const a = await trader(app, ws, 100);
    const byName = await place(a, { metricName: metric.name, targetDate: mk.targetDate, direction: 'higher', limit: 400, shares: 5 });
    expect(byName.status).toBe(200);
    expect(byName.body).toMatchObject({ marketId: mk.id, status: 'open' });
    const byId = await place(a, { metricId: metric.id, targetDate: mk.targetDate, direction: 'lower', limit: 600, shares: 5 });
    expect(byId.body.marketId).toBe(mk.id);
    const missing = await place(a, { metricId: metric.id, targetDate: '1999-01', direction: 'higher', limit: 400, shares: 5 });
    expect([missing.status, missing.body.code]).toEqual([404, 'market_not_found']);
    const unnamed = await place(a, { direction: 'higher', limit: 400, shares: 5 });
    expect([unnamed.status, unnamed.body.code]).toEqual([400, 'validation_failed']);
  });
});

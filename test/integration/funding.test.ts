import { inTransaction } from '../../src/db/tx';
import { recordFunders } from '../../src/services/books';
import { accountId, writeLedger } from '../../src/services/ledger';
import { buildWorkspace, mint, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, uniqueName, useTestApp, type TestApp } from '../helpers/harness';
import { balanceOf, marketsOf, trade, trader } from '../helpers/markets';

/**
 * Issue 28: no dead market after a metric made without credits (the owner's refresh funds what it
 * can pay, anyone with trade funds a book, the funder gets the pool back), and no silent cost (the
 * 201 says what the books cost, a dry run says it before).
 */
let app: TestApp;

useTestApp((a) => (app = a));
beforeAll(() => {
  const now = new Date();
  app.clock.set(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 15, 12)));
});
afterEach(async () => {
  await expectLedgerSound(app.deps);
});

const as = (who: TestAgent, ws: TestWorkspace) => ({ 'X-Agent-Key': who.key, 'X-Workspace-Id': ws.id });
const createMetric = (ws: TestWorkspace, body: Record<string, unknown>, query = '') =>
  app.http.post(`/api/metrics${query}`).set(as(ws.owner, ws)).send({ name: uniqueName('metric'), value: 500, ...body });
const refresh = (ws: TestWorkspace) => app.http.post('/api/predictions/markets/refresh').set(as(ws.owner, ws)).send({ force: true });
const fund = (ws: TestWorkspace, who: TestAgent, marketId: string, credits: number, key?: string) => {
  const req = app.http.post(`/api/predictions/markets/${marketId}/fund`).set(as(who, ws));
  if (key) req.set('Idempotency-Key', key);
  return req.send({ credits });
};
const settle = (ws: TestWorkspace, metricId: string, value: number) =>
  app.http.post(`/api/metrics/${metricId}/settle`).set(as(ws.owner, ws)).send({ value, reason: 'test settles early' });
const account = async (id: string) => BigInt((await app.deps.ds.query(`SELECT balance FROM accounts WHERE id = $1`, [id]))[0].balance);
const poolBalance = (marketId: string) => account(`pool:${marketId}`);

/** A public workspace whose owner holds `ownerCredits`, and a metric created in it (its 201). */
async function metricIn(ownerCredits: number) {
  const ws = await buildWorkspace(app, { public: true, ownerCredits });
  const res = await createMetric(ws, {});
  expect(res.status).toBe(201);
  return { ws, res };
}

describe('a metric made without credits', () => {
  it('answers which books stayed unfunded and why; the owner refresh funds those it can pay, nearest first', async () => {
    const { ws, res } = await metricIn(0);
    expect(res.body.subsidySpent).toBe(0);
    expect(res.body.books).toHaveLength(5);
    expect(res.body.unfundedBooks).toHaveLength(5);
    for (const u of res.body.unfundedBooks) expect(u).toMatchObject({ reason: 'insufficient_balance', needed: 100, branch: null });

    const t = await trader(app, ws, 100);
    const refused = await trade(app, ws, t, { marketId: res.body.books[0].marketId, direction: 'higher', amount: 5 });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('market_unfunded');
    expect(refused.body.error).toMatch(/\/fund/);
    expect(refused.body.error).toMatch(/refresh/);

    // 250 credits pay two books of 100; the other three stay unfunded and the answer says so.
    await mint(app, ws.owner.id, 250);
    const r = await refresh(ws);
    expect(r.status).toBe(200);
    expect(r.body.fundedCount).toBe(2);
    expect(r.body.funded.map((f: { subsidy: number }) => f.subsidy)).toEqual([100, 100]);
    expect(r.body.unfunded).toHaveLength(3);
    for (const u of r.body.unfunded) expect(u).toMatchObject({ reason: 'insufficient_balance', needed: 100 });
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(50, 9);
    const books = await marketsOf(app, ws, res.body.id);
    expect(books.filter((b) => b.funded).map((b) => b.id).sort()).toEqual(r.body.funded.map((f: { marketId: string }) => f.marketId).sort());

    const ok = await trade(app, ws, t, { marketId: r.body.funded[0].marketId, direction: 'higher', amount: 5 });
    expect(ok.status).toBe(200);
    // A second refresh with nothing more to pay funds nothing and spends nothing.
    const again = await refresh(ws);
    expect(again.body.fundedCount).toBe(0);
    expect(again.body.unfunded).toHaveLength(3);
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(50, 9);
  });

  it('a new liquidityCredits leaves open books alone (spec §2.2); the next refresh funds them at it', async () => {
    const { ws, res } = await metricIn(0);
    await mint(app, ws.owner.id, 1000);
    const put = await app.http.put(`/api/metrics/${res.body.id}`).set(as(ws.owner, ws)).send({ liquidityCredits: 50 });
    expect(put.status).toBe(200);
    expect((await marketsOf(app, ws, res.body.id)).some((b) => b.funded)).toBe(false);
    const r = await refresh(ws);
    expect(r.body.fundedCount).toBe(5);
    expect(r.body.funded.every((f: { subsidy: number }) => f.subsidy === 50)).toBe(true);
    expect((await marketsOf(app, ws, res.body.id)).every((b) => b.funded && b.liquidity === 50)).toBe(true);
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(1000 - 5 * 50, 9);
  });
});

describe('POST /predictions/markets/{id}/fund', () => {
  it('a funder who is not the owner funds a book once per key, is refused on a funded book, and gets the pool back at resolution', async () => {
    const { ws, res } = await metricIn(0);
    const marketId = res.body.books[0].marketId;
    const funder = await trader(app, ws, 200);
    const first = await fund(ws, funder, marketId, 60, 'fund-1');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ ok: true, subsidy: 60, balance: 140, idempotentReplay: false });
    expect(first.body.market).toMatchObject({ id: marketId, funded: true });
    // Opens where it was planned: the metric's value 500 on 0..1000.
    expect(first.body.market.probability).toBeCloseTo(0.5, 6);
    const replay = await fund(ws, funder, marketId, 60, 'fund-1');
    expect(replay.status).toBe(200);
    expect(replay.body.idempotentReplay).toBe(true);
    expect(await balanceOf(app, funder)).toBeCloseTo(140, 9);
    expect((await fund(ws, funder, marketId, 70, 'fund-1')).body.code).toBe('idempotency_key_reuse');

    const twice = await fund(ws, funder, marketId, 10, 'fund-2');
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('conflict');
    expect(twice.body.error).toMatch(/already funded/);
    expect((await fund(ws, funder, res.body.books[1].marketId, 500, 'fund-3')).body.code).toBe('insufficient_balance');

    const t = await trader(app, ws, 1000);
    const buy = await trade(app, ws, t, { marketId, direction: 'higher', amount: 20 });
    expect(buy.status).toBe(200);
    const funderBefore = await balanceOf(app, funder);
    const s = await settle(ws, res.body.id, 700);
    expect(s.status).toBe(200);
    const traderGot = (await balanceOf(app, t)) - (1000 - buy.body.cost);
    // The pool held 60 + the trade's cost; the trader's payout left, the rest went back to the funder, none to the owner.
    expect((await balanceOf(app, funder)) - funderBefore).toBeCloseTo(60 + buy.body.cost - traderGot, 9);
    expect(await balanceOf(app, ws.owner)).toBe(0);
    expect(await poolBalance(marketId)).toBe(0n);
    const rows = await app.deps.ds.query(`SELECT agent_id, amount::text FROM market_funders WHERE market_id = $1`, [marketId]);
    expect(rows).toEqual([{ agent_id: funder.id, amount: '60000000000' }]);
  });

  it('several funders share the pool remainder pro rata of what each put in, rounded down, the dust to the first funder', async () => {
    const NANO = 1_000_000_000n;
    const { ws, res } = await metricIn(0);
    const marketId = res.body.books[0].marketId;
    const [a, b] = [await trader(app, ws, 100), await trader(app, ws, 100)];
    expect((await fund(ws, a, marketId, 60)).status).toBe(200);
    // A second funding as a later liquidity top-up would record it (the API refuses a funded book today): through the ledger writer.
    await inTransaction(app.deps.ds, async (m) => {
      await writeLedger(m, [{ from: accountId.agent(b.id), credits: [{ to: accountId.pool(marketId), amount: 30n * NANO }], kind: 'fund', ref: marketId }]);
      await recordFunders(m, [{ marketId, agentId: b.id, amount: 30n * NANO }]);
    });
    const t = await trader(app, ws, 1000);
    expect((await trade(app, ws, t, { marketId, direction: 'higher', amount: 7 })).status).toBe(200);
    const pool = await poolBalance(marketId);
    const [aBefore, bBefore] = [await account(accountId.agent(a.id)), await account(accountId.agent(b.id))];
    expect((await settle(ws, res.body.id, 333)).status).toBe(200);
    const [{ payout }] = await app.deps.ds.query(`SELECT payout::text FROM positions WHERE market_id = $1`, [marketId]);
    const remainder = pool - BigInt(payout);
    const bGain = (await account(accountId.agent(b.id))) - bBefore;
    const aGain = (await account(accountId.agent(a.id))) - aBefore;
    expect(bGain).toBe((remainder * 30n) / 90n);
    expect(aGain).toBe(remainder - bGain);
    expect(aGain - (remainder * 60n) / 90n).toBeLessThan(2n);
    expect(await poolBalance(marketId)).toBe(0n);
  });

  it('a void gives the funder its subsidy back whole; another workspace cannot reach the book', async () => {
    const { ws, res } = await metricIn(0);
    const funder = await trader(app, ws, 100);
    const marketId = res.body.books[2].marketId;
    expect((await fund(ws, funder, marketId, 40)).status).toBe(200);
    const other = await buildWorkspace(app, { public: true });
    expect((await fund(other, other.owner, marketId, 10)).status).toBe(404);
    expect((await app.http.delete(`/api/metrics/${res.body.id}`).set(as(ws.owner, ws))).status).toBe(204);
    expect(await balanceOf(app, funder)).toBeCloseTo(100, 9);
    expect(await poolBalance(marketId)).toBe(0n);
  });
});

describe('what creating a metric costs', () => {
  it('the 201 carries subsidySpent and the cost per book', async () => {
    const { ws, res } = await metricIn(1000);
    expect(res.body.subsidySpent).toBe(500);
    expect(res.body.unfundedBooks).toEqual([]);
    expect(res.body.books.map((b: { subsidy: number; funded: boolean }) => [b.subsidy, b.funded])).toEqual(Array(5).fill([100, true]));
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(500, 9);
  });

  it('liquidityCredits on create is refused with the ways that work at creation', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const res = await createMetric(ws, { liquidityCredits: 50 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/horizonCredits/);
    expect(res.body.error).toMatch(/defaultLiquidityCredits/);
  });

  it('a dry run (query or body) says what the books would cost and whether the balance covers it, and writes nothing', async () => {
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 300 });
    const name = uniqueName('metric');
    // Scoped to this workspace (other suites write to the same database at the same time): the owner's
    // ledger rows and the workspace's books.
    const ledgerRows = async () =>
      (
        await app.deps.ds.query(
          `SELECT (SELECT count(*)::int FROM ledger_entries WHERE account_id = $1) + (SELECT count(*)::int FROM markets WHERE workspace_id = $2) AS n`,
          [`agent:${ws.owner.id}`, ws.id],
        )
      )[0].n;
    const before = await ledgerRows();
    for (const [query, body] of [['?dryRun=true', {}], ['', { dryRun: true }]] as const) {
      const res = await createMetric(ws, { name, ...body }, query);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ dryRun: true, subsidyNeeded: 500, subsidySpent: 300, balance: 300, balanceCovers: false, payerId: ws.owner.id });
      expect(res.body.books).toHaveLength(5);
      expect(res.body.books.every((b: { marketId: string | null; planned: number }) => b.marketId === null && b.planned === 100)).toBe(true);
      expect(res.body.unfundedBooks).toHaveLength(2);
      expect(res.body.metric).toMatchObject({ name, id: null, preview: true }); // a preview: no id that answers 404
      expect(res.body.refusal).toBeNull(); // a metric opens with its unfunded books, as the dry run says
    }
    expect(await ledgerRows()).toBe(before);
    expect(await balanceOf(app, ws.owner)).toBe(300);
    expect((await app.http.get(`/api/metrics/${encodeURIComponent(name)}`).set(as(ws.owner, ws))).status).toBe(404);
    // Same validation as the real create.
    const real = await createMetric(ws, { name: `${name}-x` });
    expect(real.status).toBe(201);
    expect((await createMetric(ws, { name: `${name}-x`, dryRun: true })).status).toBe(409);
    expect((await createMetric(ws, { name: `${name}-y`, formula: '{nope} + 1' }, '?dryRun=true')).status).toBe(400);
  });
});

describe('what a proposal costs', () => {
  const propose = (ws: TestWorkspace, who: TestAgent, body: Record<string, unknown>, query = '') =>
    app.http.post(`/api/proposals${query}`).set(as(who, ws)).send(body);

  it('the answer carries subsidySpent and the branch books it paid for; a dry run says it before and writes nothing', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(ws, {});
    expect(metric.status).toBe(201);
    const poor = await trader(app, ws, 5);
    const quote = await propose(ws, poor, { title: 'Hire a designer', liquidity: 10 }, '?dryRun=true');
    expect(quote.status).toBe(200);
    expect(quote.body).toMatchObject({ dryRun: true, title: 'Hire a designer', subsidyNeeded: 20, subsidySpent: 0, balance: 5, balanceCovers: false, payerId: poor.id });
    // Issue 56: the dry run says the real call would be refused (not that its books would open unfunded).
    expect(quote.body.refusal).toMatchObject({ code: 'insufficient_balance', balance: 5, cost: 20 });
    expect(quote.body.unfundedBooks).toEqual([]);
    const rich = await trader(app, ws, 100);
    const covered = await propose(ws, rich, { title: 'Hire a designer', liquidity: 10, dryRun: true });
    expect(covered.body).toMatchObject({ subsidyNeeded: 20, subsidySpent: 20, balanceCovers: true, unfundedBooks: [], refusal: null });
    expect((await app.deps.ds.query(`SELECT count(*)::int AS n FROM proposals WHERE workspace_id = $1`, [ws.id]))[0].n).toBe(0);
    expect(await balanceOf(app, rich)).toBe(100);
    // The real one: refused for the poor proposer as before, paid by the rich one, and the answer says what it cost.
    const refused = await propose(ws, poor, { title: 'Hire a designer', liquidity: 10 });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(quote.body.refusal); // the dry run and the real call agree, word for word
    const real = await propose(ws, rich, { title: 'Hire a designer', liquidity: 10 });
    expect(real.status).toBe(200);
    expect(real.body.subsidySpent).toBe(20);
    expect(real.body.books.map((b: { branch: string; subsidy: number; funderId: string }) => [b.branch, b.subsidy, b.funderId]).sort()).toEqual([
      ['approved', 10, rich.id],
      ['declined', 10, rich.id],
    ]);
    expect(await balanceOf(app, rich)).toBeCloseTo(80, 9);
  });
});

describe('creating a metric or a proposal with an Idempotency-Key (their books are paid for)', () => {
  it('a retry with the key answers the first outcome and pays once; the same key with another body is refused; no key creates twice', async () => {
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 10_000 });
    const name = uniqueName('metric');
    const send = (body: Record<string, unknown>, key?: string) => {
      const req = app.http.post('/api/metrics').set(as(ws.owner, ws));
      if (key) req.set('Idempotency-Key', key);
      return req.send({ value: 500, ...body });
    };
    const before = await account(`agent:${ws.owner.id}`);
    const first = await send({ name }, 'metric-once');
    expect(first.status).toBe(201);
    const again = await send({ name }, 'metric-once');
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.subsidySpent).toBe(first.body.subsidySpent);
    expect(first.body.subsidySpent).toBeGreaterThan(0);
    const metrics = await app.deps.ds.query(`SELECT id FROM metrics WHERE workspace_id = $1 AND name = $2`, [ws.id, name]);
    expect(metrics).toHaveLength(1);
    expect(before - (await account(`agent:${ws.owner.id}`))).toBe(BigInt(first.body.subsidySpent) * 1_000_000_000n);
    const reused = await send({ name: uniqueName('metric') }, 'metric-once');
    expect(reused.status).toBe(409);
    expect(reused.body.code).toBe('idempotency_key_reuse');

    const proposer = await trader(app, ws, 1_000);
    const propose = (key?: string) => {
      const req = app.http.post('/api/proposals').set(as(proposer, ws));
      if (key) req.set('Idempotency-Key', key);
      return req.send({ title: 'Hire a second engineer', liquidity: 10 });
    };
    const p1 = await propose('proposal-once');
    expect(p1.status).toBe(200);
    const p2 = await propose('proposal-once');
    expect(p2.status).toBe(200);
    expect(p2.body.id).toBe(p1.body.id);
    expect((await app.deps.ds.query(`SELECT id FROM proposals WHERE workspace_id = $1`, [ws.id])).length).toBe(1);
    const p3 = await propose();
    expect(p3.status).toBe(200);
    expect(p3.body.id).not.toBe(p1.body.id);
    expect(await balanceOf(app, proposer)).toBe(1_000 - p1.body.subsidySpent - p3.body.subsidySpent);
  });
});

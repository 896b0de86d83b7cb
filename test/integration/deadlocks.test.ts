import { randomUUID } from 'node:crypto';
import { TRADE_JOB_OPTS } from '../../src/services/trading';
import type { TradeJobData } from '../../src/services/trading';
import { buildWorkspace, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, freshBookId, trade, trader } from '../helpers/markets';
import { waitFor } from '../helpers/services';
import { waitForDeletion } from '../helpers/deletions';
import { whileHolding as holdLock, type HeldLock } from '../helpers/lockWaits';

/**
 * Issue 29 step 0: no deadlock by construction. Two books on two different lanes get batches over
 * the same traders in opposite orders, many at once. Each trade's write locks its trader's account
 * and its book's pool; before a batch took all its account locks up front (in id order) the two
 * lanes' transactions crossed and Postgres broke the cycle ("deadlock detected"), a 1 s wait each.
 */
let app: TestApp;
let ws: TestWorkspace;

useTestApp((a) => (app = a), { TRADE_LANES: '16' });
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});
afterEach(async () => expectLedgerSound(app.deps));

/** This database's deadlock count, read past the statistics' cache and lag. */
async function deadlocks(): Promise<number> {
  const [{ v }] = await app.deps.ds.query(`SELECT current_setting('server_version_num')::int AS v`);
  if (v >= 150000) await app.deps.ds.query(`SELECT pg_stat_force_next_flush()`);
  const [r] = await app.deps.ds.query(`SELECT pg_stat_clear_snapshot(), deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()`);
  return r.n;
}

/** Two fresh books whose trade lanes differ. */
async function booksOnTwoLanes(): Promise<[string, string]> {
  const lane = (id: string) => app.deps.hub.queueFor('trade', id);
  const a = await freshBookId(app, ws);
  for (;;) {
    const b = await freshBookId(app, ws);
    if (lane(b) !== lane(a)) return [a, b];
  }
}

/** One lane job carrying `traders`' small buys on `marketId`, in that order, applied by the lane's worker. */
async function laneBatch(marketId: string, traders: TestAgent[], round: number): Promise<void> {
  const outcomes = await laneBatchIn(ws, marketId, traders, round);
  for (const o of outcomes) expect(o.ok).toBe(true);
}

async function laneBatchIn(inWs: TestWorkspace, marketId: string, traders: TestAgent[], round = 0): Promise<Array<{ ok: boolean }>> {
  const trades: TradeJobData[] = traders.map((t, i) => ({
    requestId: randomUUID(),
    agentId: t.id,
    workspaceId: inWs.id,
    marketId,
    spec: { mode: 'buy', direction: (i + round) % 2 ? 'higher' : 'lower', amount: '1000000000' },
  }));
  const r = await app.deps.hub.enqueueAndWait('trade', 'trade', { trades }, { jobId: trades[0].requestId, laneKey: marketId, ...TRADE_JOB_OPTS, waitMs: 60_000 });
  if (!r.finished) throw new Error('a lane batch did not finish');
  // The job returns nothing (its outcomes go out in its commit's notices): read them from the journal.
  const rows: Array<{ request_id: string; status: string }> = await app.deps.ds.query(`SELECT request_id, status FROM trade_requests WHERE request_id = ANY($1::text[])`, [
    trades.map((t) => t.requestId),
  ]);
  const byId = new Map(rows.map((row) => [row.request_id, row.status]));
  return trades.map((t) => ({ ok: byId.get(t.requestId) === 'done' }));
}

/**
 * Hold a row lock from outside (`lockSql`) while `run` starts the contenders and releases it, then
 * check that the database saw no deadlock meanwhile.
 */
async function whileHolding(lockSql: string, params: unknown[], run: (h: HeldLock) => Promise<void>): Promise<void> {
  const before = await deadlocks();
  await holdLock(lockSql, params, async (h) => {
    await run(h);
    await new Promise((r) => setTimeout(r, 1100)); // backends report their counters at most once a second
    expect((await deadlocks()) - before).toBe(0);
  });
}

describe('account locks across lanes', () => {
  it('two lanes applying batches over the same traders in opposite orders never deadlock', async () => {
    const [m1, m2] = await booksOnTwoLanes();
    const traders: TestAgent[] = [];
    for (let i = 0; i < 8; i++) traders.push(await trader(app, ws, 1000));
    const reversed = [...traders].reverse();
    const before = await deadlocks();
    const rounds = 40;
    const t0 = Date.now();
    // A few batches in flight on each lane at once, so the two lanes' transactions overlap.
    const jobs: Array<Promise<void>> = [];
    for (let r = 0; r < rounds; r++) jobs.push(laneBatch(m1, traders, r), laneBatch(m2, reversed, r));
    await Promise.all(jobs);
    await new Promise((r) => setTimeout(r, 1100)); // backends report their counters at most once a second
    const after = await deadlocks();
    console.log(`deadlocks: ${after - before} over ${rounds} rounds x 2 lanes x ${traders.length} trades in ${Date.now() - t0} ms`);
    expect(after - before).toBe(0);
    const [{ n }] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM trades WHERE market_id = ANY($1::uuid[]) AND kind = 'buy'`, [[m1, m2]]);
    expect(n).toBe(rounds * 2 * traders.length);
  }, 180_000);

  it("a fill's owner is locked with the batch's other accounts, before any write: a batch waits on it only in its lock statement", async () => {
    const marketId = await freshBookId(app, ws);
    const owner = await trader(app, ws, 100);
    const taker = await trader(app, ws, 1000);
    // The owner holds lower shares, so the wall's higher shares redeem pairs: the fill pays the owner.
    expect((await trade(app, ws, owner, { marketId, direction: 'lower', amount: 1 })).status).toBe(200);
    const placed = await app.http.post('/api/predictions/orders').set('X-Agent-Key', owner.key).set('X-Workspace-Id', ws.id).send({ marketId, direction: 'higher', limit: 400, shares: 10 });
    expect(placed.status).toBe(200);
    await whileHolding('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [`agent:${owner.id}`], async (h) => {
      const done = trade(app, ws, taker, { marketId, direction: 'lower', amount: 40, limit: 400 }).then((r) => r);
      const waiting: string = await waitFor('the batch to wait on the owner', async () => (await h.blockedQueries([h.pid]))[0]);
      // The batch's account lock statement, not a ledger write (the fills' or the trade's).
      expect(waiting).toMatch(/JOIN ids ON ids\.id = a\.id ORDER BY a\.id FOR UPDATE OF a/);
      expect(waiting).not.toMatch(/ledger_lock|INSERT|UPDATE accounts/);
      await h.release();
      const res = await done;
      expect(res.status).toBe(200);
      expect(res.body.limitFills).toHaveLength(1);
    });
  });

  it('a proposal decision and a lane batch over the same accounts never deadlock: the decision takes its accounts in one sorted statement, last', async () => {
    // Two traders, `low` and `high` by account id: `high` rests an order on a branch book (the decision
    // refunds its reserve), `low` holds a position there (the decision's void refunds it); a lane batch
    // on another book trades both, so it locks low, then high.
    const metric = await createMetric(app, ws, { value: 500 });
    // A proposal opens a pair on every leaf metric of the workspace (20 credits a metric here), and
    // the earlier tests leave 4 or more: booksOnTwoLanes makes books until two lanes differ.
    const proposer = await trader(app, ws, 1000);
    const proposed = await app.http.post('/api/proposals').set('X-Agent-Key', proposer.key).set('X-Workspace-Id', ws.id).send({ title: 'deadlock', liquidity: 10 });
    expect({ status: proposed.status, body: proposed.body }).toMatchObject({ status: 200 });
    const branchBook: string = proposed.body.conditionalMarkets.find((b: { metricId: string }) => b.metricId === metric.id).id;
    const [low, high] = [await trader(app, ws, 1000), await trader(app, ws, 1000)].sort((x, y) => (`agent:${x.id}` < `agent:${y.id}` ? -1 : 1));
    expect((await trade(app, ws, low, { marketId: branchBook, direction: 'higher', amount: 1 })).status).toBe(200);
    const placed = await app.http.post('/api/predictions/orders').set('X-Agent-Key', high.key).set('X-Workspace-Id', ws.id).send({ marketId: branchBook, direction: 'higher', limit: 400, shares: 10 });
    expect(placed.status).toBe(200);
    const other = await freshBookId(app, ws);
    // Pause the decision partway: its void's payout record waits on this row lock. The old code had
    // written the orders' refunds by then, so it held high's account.
    await whileHolding('SELECT 1 FROM positions WHERE market_id = $1 AND agent_id = $2 FOR UPDATE', [branchBook, low.id], async (h) => {
      const decided = app.http.post(`/api/proposals/${proposed.body.id}/withdraw`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).then((r) => r);
      const decision = await waitFor('the decision to wait on the held position', async () => (await h.waitingOn([h.pid]))[0]);
      // The batch locks low, then high: the old code's decision held high, so the batch waited on it.
      let batchDone = false;
      const batch = laneBatch(other, [low, high], 0).then(() => (batchDone = true));
      await waitFor('the batch to finish or wait on the decision', async () => batchDone || (await h.waitingOn([decision])).length > 0);
      // Released: the old decision then wanted low, which the batch held (a cycle, broken after 1 s).
      await h.release();
      expect((await decided).status).toBe(200);
      await batch;
    });
  });

  it('deleting a workspace and a lane batch never deadlock: every book is locked before any account', async () => {
    // The old deletion voided book by book: the first void's refund locked a holder's account, then the
    // next book's lock waited on a batch there that waited on that holder.
    const ws2 = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
    await freshBookId(app, ws2);
    await freshBookId(app, ws2);
    const ids: string[] = (await app.deps.ds.query(`SELECT id FROM markets WHERE workspace_id = $1 AND status = 'open' ORDER BY id`, [ws2.id])).map((r: { id: string }) => r.id);
    const [first, last] = [ids[0], ids[ids.length - 1]];
    const holderOf = await trader(app, ws2, 1000);
    expect((await trade(app, ws2, holderOf, { marketId: first, direction: 'higher', amount: 1 })).status).toBe(200);
    await whileHolding('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [`agent:${holderOf.id}`], async (h) => {
      const deleted = app.http.delete(`/api/workspaces/${ws2.id}`).set('X-Agent-Key', ws2.owner.key).then((r) => r);
      const deletion = await waitFor('the deletion to wait on the held account', async () => (await h.waitingOn([h.pid]))[0]);
      // A batch on the last book trading the holder: the old code let it take that book, then wait on the holder.
      let batchDone = false;
      const batch = laneBatchIn(ws2, last, [holderOf]).then(() => (batchDone = true));
      await waitFor('the batch to finish or wait', async () => batchDone || (await h.waitingOn([h.pid, deletion])).length >= 2);
      await h.release();
      // The DELETE answered 202 at once; the deletion job's books batch is what waited on the holder.
      await waitForDeletion(app, await deleted);
      await batch.catch(() => undefined); // the book may be gone by the time the batch runs
    });
  });
});

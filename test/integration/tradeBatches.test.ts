import { randomUUID } from 'node:crypto';
import { Client, type Notification } from 'pg';
import { pgNotices } from '../../src/db/notices';
import { outcomeEar, outcomeNotices, TRADE_OUTCOMES_CHANNEL } from '../../src/services/trading/outcomeNotices';
import type { TradeOutcome } from '../../src/domain/outcomes';
import { buildWorkspace, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { balanceOf, freshBookId, gathered, trade, trader } from '../helpers/markets';
import { whileHolding } from '../helpers/lockWaits';
import { waitFor } from '../helpers/services';

/**
 * The API batches a lane's trade requests while one of its batches is in flight (issue 17): one
 * job, one transaction, which writes the requests' journal rows with their trades. These tests hold the book's row lock so the first trade's
 * job stays in flight, let the others gather behind it, then let go.
 */
let app: TestApp;
let ws: TestWorkspace;

useTestApp((a) => (app = a), { TRADE_BATCH_INFLIGHT: '1', TRADE_APPLY_AT_ONCE: 'false' }); // the lane's queue path (issue 66: a batch applies at once otherwise)
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});
afterEach(async () => expectLedgerSound(app.deps));

const book = () => freshBookId(app, ws);

/** The book's trades in the order they applied: each starts where the one before ended. */
async function expectChained(marketId: string): Promise<number> {
  const rows = await app.deps.ds.query(`SELECT probability_before AS b, probability_after AS a FROM trades WHERE market_id = $1 AND kind <> 'redeem' ORDER BY seq`, [marketId]);
  for (let i = 1; i < rows.length; i++) expect(rows[i].b).toBeCloseTo(rows[i - 1].a, 12);
  return rows.length;
}

/**
 * The most requests one batch on this book applied or refused: journal rows its transaction wrote
 * (they share its xmin) in a transaction that also wrote one of the book's trades. Finished trade
 * jobs are not kept in Redis, so the journal is where a batch's size can be read.
 */
async function largestBatch(marketId: string): Promise<number> {
  const [r] = await app.deps.ds.query(
    `SELECT coalesce(max(n), 0)::int AS n FROM (
       SELECT count(*) AS n FROM trade_requests WHERE xmin::text IN (SELECT xmin::text FROM trades WHERE market_id = $1) GROUP BY xmin::text) x`,
    [marketId],
  );
  return r.n;
}

describe('trade batches on a lane', () => {
  it('requests gathered behind an in-flight batch go as one job: each applies once, in order, a refusal refuses only its own, a keyed twin replays', async () => {
    const marketId = await book();
    const rich: TestAgent[] = [];
    for (let i = 0; i < 5; i++) rich.push(await trader(app, ws, 100));
    const poor = await trader(app, ws, 1);
    const key = `twin-${Date.now()}`;
    const body = (i: number) => ({ marketId, direction: i % 2 ? 'higher' : 'lower', amount: 2 });
    const [head, ...rest] = await gathered(app, marketId, () => trade(app, ws, rich[0], body(0)), [
      ...rich.slice(1).map((t, i) => () => trade(app, ws, t, body(i + 1))),
      () => trade(app, ws, poor, { marketId, direction: 'higher', amount: 50 }),
      () => trade(app, ws, rich[0], body(7), key),
      () => trade(app, ws, rich[0], body(7), key),
      // Read under the lock the batch already holds: the sell sees the shares bought just before it.
      () => trade(app, ws, rich[2], { marketId, direction: 'lower', sellShares: 1 }),
    ]);
    expect(head.status).toBe(200);
    for (const r of rest.slice(0, 4)) expect(r.status).toBe(200);
    expect(rest[4].status).toBe(400);
    expect(rest[4].body.code).toBe('insufficient_balance');
    expect(await balanceOf(app, poor)).toBeCloseTo(1, 9);
    // The twins: one applied, the other (left out of the journal INSERT: its key was taken) replays it.
    const twins = rest.slice(5, 7);
    expect(twins.map((r) => r.status)).toEqual([200, 200]);
    expect(twins[0].body.tradeId).toBe(twins[1].body.tradeId);
    expect(twins.map((r) => r.body.idempotentReplay).sort()).toEqual([false, true]);
    const sold = rest[7];
    expect(sold.status).toBe(200);
    expect(sold.body).toMatchObject({ kind: 'sell', direction: 'lower', shares: 1 });
    expect(sold.body.position.shares).toBeCloseTo(rest[1].body.position.shares - 1, 9);
    expect(await expectChained(marketId)).toBe(7);
    expect(await largestBatch(marketId)).toBeGreaterThanOrEqual(6);
  });

  it('a buy that fills a resting order and then cannot pay takes its fills back, and the rest of the batch applies', async () => {
    const marketId = await book();
    const maker = await trader(app, ws, 100);
    const poor = await trader(app, ws, 5);
    const other = await trader(app, ws, 100);
    const placed = await app.http.post('/api/predictions/orders').set('X-Agent-Key', maker.key).set('X-Workspace-Id', ws.id).send({ marketId, direction: 'higher', limit: 400, shares: 10 });
    expect(placed.status).toBe(200);
    // Alone, the poor buy would meet the wall at 400 (a fill) before the ledger finds it cannot pay.
    const dry = await trade(app, ws, poor, { marketId, direction: 'lower', amount: 40, limit: 400, dryRun: true });
    expect(dry.body.limitFills).toHaveLength(1);
    expect(dry.body.affordable).toBe(false);
    const [head, refused, after] = await gathered(app, marketId, () => trade(app, ws, other, { marketId, direction: 'higher', amount: 1 }), [
      () => trade(app, ws, poor, { marketId, direction: 'lower', amount: 40, limit: 400 }),
      () => trade(app, ws, other, { marketId, direction: 'lower', amount: 1 }),
    ]);
    expect(head.status).toBe(200);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('insufficient_balance');
    expect(after.status).toBe(200);
    const order = await app.http.get(`/api/predictions/orders/${placed.body.id}`).set('X-Agent-Key', maker.key).set('X-Workspace-Id', ws.id);
    expect(order.body).toMatchObject({ status: 'open', filled: 0, reserved: 4 });
    expect(await balanceOf(app, poor)).toBeCloseTo(5, 9);
    expect(await expectChained(marketId)).toBe(2);
    expect(await largestBatch(marketId)).toBe(2);
  });

  it("nothing is written before a request's batch: its journal row commits with its trade, and a keyed twin in a later batch replays it", async () => {
    const marketId = await book();
    const ts: TestAgent[] = [];
    for (let i = 0; i < 4; i++) ts.push(await trader(app, ws, 100));
    const key = `later-${Date.now()}`;
    const body = { marketId, direction: 'higher', amount: 2 };
    const rowsOf = async () => (await app.deps.ds.query(`SELECT count(*)::int AS n FROM trade_requests WHERE agent_id = ANY($1::text[])`, [ts.map((t) => t.id)]))[0].n as number;
    let whileHeld = -1;
    const answers = await gathered(
      app,
      marketId,
      () => trade(app, ws, ts[0], body),
      [() => trade(app, ws, ts[1], body), () => trade(app, ws, ts[2], body, key), () => trade(app, ws, ts[3], body)],
      // The batch in flight cannot commit (the book is held) and the rest wait behind it: no row yet.
      async () => void (whileHeld = await rowsOf()),
    );
    expect(whileHeld).toBe(0);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    // Each request's row was written by the transaction that wrote its trade.
    const [apart] = await app.deps.ds.query(
      `SELECT count(*)::int AS n FROM trades t JOIN trade_requests r ON r.request_id = t.request_id WHERE t.market_id = $1 AND r.xmin::text <> t.xmin::text`,
      [marketId],
    );
    expect(apart.n).toBe(0);
    expect(await rowsOf()).toBe(4);
    // The key, sent again in a batch of its own: refused by the batch as taken, answered with the first outcome.
    const again = await trade(app, ws, ts[2], body, key);
    expect(again.status).toBe(200);
    expect(again.body.idempotentReplay).toBe(true);
    expect(again.body.tradeId).toBe(answers[2].body.tradeId);
    const applied: Array<{ agent_id: string }> = await app.deps.ds.query(`SELECT agent_id FROM trades WHERE market_id = $1 ORDER BY seq`, [marketId]);
    expect(applied.map((r) => r.agent_id)).toEqual(ts.map((t) => t.id));
    expect(await expectChained(marketId)).toBe(4);
  });

  it('one key sent to two markets on two lanes at once: one applies, the other is answered 409 idempotency_key_reuse, and nothing is written twice', async () => {
    const a = await book();
    let b = await book();
    while (app.deps.hub.queueFor('trade', b) === app.deps.hub.queueFor('trade', a)) b = await book();
    const t = await trader(app, ws, 100);
    const key = `two-books-${Date.now()}`;
    // Both batches read the key's holders, then wait on the trader's account: the first to get it
    // commits the key; the second's write meets the unique index and runs again, reading it taken.
    await whileHolding(`SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, [`agent:${t.id}`], async (h) => {
      const answers = [trade(app, ws, t, { marketId: a, direction: 'higher', amount: 2 }, key).then((r) => r), trade(app, ws, t, { marketId: b, direction: 'higher', amount: 2 }, key).then((r) => r)];
      // Waiting on this holder, the second in line behind the first (other suites' backends wait on
      // their own locks meanwhile).
      await waitFor('both batches waiting on the account', async () => {
        const first = await h.waitingOn([h.pid]);
        const behind = await h.blockedQueries([h.pid, ...first]);
        return behind.filter((q) => q.includes('locked_accounts')).length >= 2;
      });
      await h.release();
      const [ra, rb] = await Promise.all(answers);
      expect([ra.status, rb.status].sort()).toEqual([200, 409]);
      expect([ra, rb].find((r) => r.status === 409)!.body.code).toBe('idempotency_key_reuse');
    });
    const [n] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM trades WHERE agent_id = $1`, [t.id]);
    expect(n.n).toBe(1);
  });
});

/**
 * Issue 29: a lane batch announces its outcomes with a pg_notify inside its own write (delivered at
 * commit), and the API answers from that notice instead of reading the queue's event stream.
 */
describe('trade outcome notices', () => {
  it("a trade is answered from its batch's notice, which carries the journal's outcome, and the API reads no lane events", async () => {
    // A book on a lane whose events nobody in this process reads yet (an order placement earlier in
    // the file waits on its lane's events, and so opens a reader there).
    const lane = (id: string) => app.deps.hub.queueFor('trade', id);
    let marketId = await freshBookId(app, ws);
    for (let i = 0; i < 20 && app.deps.hub.readsEventsOf(lane(marketId)); i++) marketId = await freshBookId(app, ws);
    expect(app.deps.hub.readsEventsOf(lane(marketId))).toBe(false);
    const t = await trader(app, ws);
    const listener = new Client({ connectionString: app.deps.config.databaseUrl });
    await listener.connect();
    const heard: Array<[string, { ok: boolean; body: Record<string, unknown> } | null]> = [];
    try {
      listener.on('notification', (n: Notification) => {
        if (n.channel === TRADE_OUTCOMES_CHANNEL) heard.push(...JSON.parse(n.payload ?? '[]'));
      });
      await listener.query(`LISTEN ${TRADE_OUTCOMES_CHANNEL}`);
      const res = await trade(app, ws, t, { marketId, direction: 'higher', amount: 5 }, `notice-${marketId}`);
      expect(res.status).toBe(200);
      const [row] = (await app.deps.ds.query(`SELECT request_id, status, response FROM trade_requests WHERE agent_id = $1 AND idempotency_key = $2`, [t.id, `notice-${marketId}`])) as Array<{
        request_id: string;
        status: string;
        response: Record<string, unknown>;
      }>;
      expect(row.status).toBe('done');
      await waitFor('the notice', async () => heard.some(([id]) => id === row.request_id));
      const [, outcome] = heard.find(([id]) => id === row.request_id)!;
      expect(outcome).toEqual({ ok: true, body: row.response });
      expect(outcome!.body.tradeId).toBe(res.body.tradeId);
      expect(app.deps.hub.readsEventsOf(lane(marketId))).toBe(false);
    } finally {
      await listener.end();
    }
  });

  it('a batch the process commits is heard by its own waiting callers at once: with the LISTEN connection not read, the trade is still answered from the batch, and the notice comes after', async () => {
    const marketId = await freshBookId(app, ws);
    const t = await trader(app, ws);
    const heard = new Set<string>();
    const unsubscribe = pgNotices(app.deps).subscribe(TRADE_OUTCOMES_CHANNEL, { notice: (payload) => (JSON.parse(payload) as Array<[string]>).forEach(([id]) => heard.add(id)) });
    outcomeEar(app.deps);
    await waitFor('the LISTEN connection', async () => pgNotices(app.deps).isLive(TRADE_OUTCOMES_CHANNEL));
    // The LISTEN connection stays up (so the API relies on notices) but its socket is not read:
    // without hearing its own commits, the caller would wait TRADE_WAIT_MS (10 s) and read the journal.
    const stream = (pgNotices(app.deps) as unknown as { client: { connection: { stream: { pause(): void; resume(): void } } } }).client.connection.stream;
    const started = performance.now();
    stream.pause();
    let res: Awaited<ReturnType<typeof trade>>;
    let requestId: string;
    try {
      res = await trade(app, ws, t, { marketId, direction: 'higher', amount: 4 }, `own-${marketId}`);
      expect(performance.now() - started).toBeLessThan(app.deps.config.TRADE_WAIT_MS / 2);
      expect(res.status).toBe(200);
      [{ request_id: requestId }] = await app.deps.ds.query(`SELECT request_id FROM trade_requests WHERE agent_id = $1 AND idempotency_key = $2 AND status = 'done'`, [t.id, `own-${marketId}`]);
      expect(heard.has(requestId)).toBe(false);
    } finally {
      stream.resume();
    }
    // The notice went out all the same (other processes' callers hear their batches there).
    try {
      await waitFor('the notice', async () => heard.has(requestId));
    } finally {
      unsubscribe();
    }
  });

  it("a batch's notices settle its waiters chunk by chunk, and a notice of requests nobody here waits for is not decoded", async () => {
    const ear = outcomeEar(app.deps);
    await waitFor('the LISTEN connection', async () => pgNotices(app.deps).isLive(TRADE_OUTCOMES_CHANNEL));
    const ids = Array.from({ length: 30 }, () => randomUUID());
    const outcomes = ids.map((id) => ({ ok: false, body: { code: 'market_closed', message: 'x'.repeat(400), id } }) as unknown as TradeOutcome);
    const notices = outcomeNotices(ids, outcomes);
    expect(notices.length).toBeGreaterThan(1);
    const waiting = await ear.watch(ids);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      for (const n of notices) ear.heard(n);
      expect(parse).toHaveBeenCalledTimes(notices.length);
      expect((await waiting.ended).outcomes).toEqual(outcomes);
      // Heard again (the LISTEN copy after hearCommitted): nobody waits, nothing is decoded.
      parse.mockClear();
      for (const n of notices) ear.heard(n);
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
      waiting.dispose();
    }
  });

  it('with its LISTEN connection cut, the API answers from the journal, and hears notices again once it is back', async () => {
    const marketId = await freshBookId(app, ws);
    const t = await trader(app, ws);
    const mine = `mpps-notices-${process.pid}`;
    // A request waiting for a notice when the connection goes is told at once (it reads the journal).
    const waiting = await outcomeEar(app.deps).watch([`never-${marketId}`]);
    const cut = await app.deps.ds.query(`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1`, [mine]);
    expect(cut.length).toBeGreaterThan(0);
    await expect(waiting.ended).rejects.toThrow('not heard');
    waiting.dispose();
    const during = await trade(app, ws, t, { marketId, direction: 'higher', amount: 3 });
    expect(during.status).toBe(200);
    await waitFor('the LISTEN connection back', async () => pgNotices(app.deps).isLive(TRADE_OUTCOMES_CHANNEL));
    const after = await trade(app, ws, t, { marketId, direction: 'lower', amount: 3 });
    expect(after.status).toBe(200);
    const trades = await app.deps.ds.query(`SELECT count(*)::int AS n FROM trades WHERE market_id = $1 AND agent_id = $2`, [marketId, t.id]);
    expect(trades[0].n).toBeGreaterThanOrEqual(2);
  });
});

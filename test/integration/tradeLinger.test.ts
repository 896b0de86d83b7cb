import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { Client } from 'pg';
import { laneBatches } from '../../src/services/trading';
import { freshBookId, gathered, trade, trader } from '../helpers/markets';
import { waitFor } from '../helpers/services';

/**
 * A free lane waits a moment for the callers just answered (tradeBatches.ts, lingerLeft), so that
 * they and the requests that waited for that batch go as one. The wait is long here (1 s) so that a
 * supertest request sent on an answer surely comes within it on a busy machine; the lanes' state is
 * this app's own (a file of its own: no earlier wait has run out on its lanes). Four lanes, so that
 * each test finds lanes on which no earlier test let a wait run out.
 */
let app: TestApp;
let ws: TestWorkspace;

const LINGER_MS = 1000;
useTestApp((a) => (app = a), { TRADE_BATCH_INFLIGHT: '1', TRADE_BATCH_LINGER_MS: String(LINGER_MS), TRADE_LANES: '4', TRADE_APPLY_AT_ONCE: 'false' }); // the lane's queue path (issue 66)
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});
afterEach(async () => expectLedgerSound(app.deps));

type Answer = Awaited<ReturnType<typeof trade>>;
type Send = () => PromiseLike<Answer>;

/**
 * One round on a held book: `first` in flight, `rest` waiting behind it, `again` (if any) sent when
 * `first` is answered. Every trade applies; returns the transaction (xmin) that wrote each, in that order.
 */
async function round(marketId: string, first: Send, rest: Send[], again?: Send): Promise<string[]> {
  const answers = await gathered(app, marketId, first, rest, undefined, again);
  for (const r of answers) expect(r.status).toBe(200);
  return xminsOf(answers);
}

/** The transaction (xmin) that wrote each answer's trade. */
async function xminsOf(answers: Answer[]): Promise<string[]> {
  const ids = answers.map((r) => r.body.tradeId as string);
  const rows: Array<{ id: string; x: string }> = await app.deps.ds.query(`SELECT id, xmin::text AS x FROM trades WHERE id = ANY($1::uuid[])`, [ids]);
  const by = new Map(rows.map((r) => [r.id, r.x]));
  return ids.map((id) => by.get(id)!);
}

/**
 * Let the last answers age past a wait, a closed group's longer one included (twice LINGER_MS):
 * callers answered and not back would otherwise make the next round's first request wait for them
 * (its lane would linger before its batch).
 */
const settle = () => new Promise((res) => setTimeout(res, 2 * LINGER_MS + 100));

/** Lanes a test let a wait run out on: they skip their next waits, so later tests keep off them. */
const backedOff = new Set<string>();

/** A new book on none of these lanes. */
async function bookOffLanes(lanes: Set<string>): Promise<string> {
  for (let i = 0; i < 40; i++) {
    const id = await freshBookId(app, ws);
    if (!lanes.has(app.deps.hub.queueFor('trade', id))) return id;
  }
  throw new Error('every new book fell on the lanes to avoid');
}

describe('a lane waits for the callers it just answered', () => {
  it('a caller sending again at once goes in one batch with those that waited; when none comes back, the waiting go when the wait runs out, and the next batches do not wait', async () => {
    const marketId = await freshBookId(app, ws);
    const [a, b, c] = [await trader(app, ws, 100), await trader(app, ws, 100), await trader(app, ws, 100)];
    const buy = (who: typeof a) => () => trade(app, ws, who, { marketId, direction: 'higher', amount: 1 });

    // a's trade in flight, b's and c's waiting for it; a trades again the moment it is answered:
    // b, c and a's second trade go in one transaction (without the wait, b and c would have gone at
    // once when a was answered, and a's second trade in a batch of its own).
    const [x1a, x1b, x1c, x1again] = await round(marketId, buy(a), [buy(b), buy(c)], buy(a));
    expect(new Set([x1b, x1c, x1again]).size).toBe(1);
    expect(x1a).not.toBe(x1b);

    // Nobody comes back: b's and c's requests go when the wait runs out (they are answered).
    backedOff.add(app.deps.hub.queueFor('trade', marketId));
    await settle();
    await round(marketId, buy(a), [buy(b), buy(c)]);

    // That wait ran out, so the lane's next batches go at once: a's second trade is in a batch of
    // its own, after b's and c's.
    await settle();
    const [, x3b, x3c, x3again] = await round(marketId, buy(a), [buy(b), buy(c)], buy(a));
    expect(x3b).toBe(x3c);
    expect(x3again).not.toBe(x3b);
  });

  it('a caller answered on one lane that trades on another counts as back: the waiting requests of both lanes go then, as one batch, without the wait running out', async () => {
    const marketId = await bookOffLanes(backedOff);
    const elsewhere = await bookOffLanes(new Set([app.deps.hub.queueFor('trade', marketId)]));
    const [a, b, c] = [await trader(app, ws, 100), await trader(app, ws, 100), await trader(app, ws, 100)];
    const buy = (who: typeof a, m = marketId) => () => trade(app, ws, who, { marketId: m, direction: 'higher', amount: 1 });
    await settle();

    // a's trade in flight, b's and c's waiting; answered, a trades on the other lane's book: that
    // lane is free, and takes b's and c's along (their lane has nothing in flight).
    const [xa, xb, xc, xelsewhere] = await round(marketId, buy(a), [buy(b), buy(c)], buy(a, elsewhere));
    expect(new Set([xb, xc, xelsewhere]).size).toBe(1);
    expect(xa).not.toBe(xb);

    // Had the first lane's wait run out, it would not wait now: that a's second trade joins b's and
    // c's shows that it went without.
    await settle();
    const [, yb, yc, yagain] = await round(marketId, buy(a), [buy(b), buy(c)], buy(a));
    expect(new Set([yb, yc, yagain]).size).toBe(1);
  });

  it('requests waiting on two lanes while both are in flight go as one batch once both are answered and their callers are back', async () => {
    const m1 = await bookOffLanes(backedOff);
    const m2 = await bookOffLanes(new Set([...backedOff, app.deps.hub.queueFor('trade', m1)]));
    const [a, b, c, d] = [await trader(app, ws, 100), await trader(app, ws, 100), await trader(app, ws, 100), await trader(app, ws, 100)];
    const buy = (who: typeof a, m: string) => () => trade(app, ws, who, { marketId: m, direction: 'higher', amount: 1 });
    await settle(); // the callers the last test's round answered are not waited for
    const holder = new Client({ connectionString: process.env.DATABASE_URL });
    await holder.connect();
    try {
      // Both books held: a's trade in flight on the first lane, b's on the second; c's and d's wait behind them.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM markets WHERE id = ANY($1::uuid[]) FOR UPDATE', [[m1, m2]]);
      const inFlight = async (m: string, f: Send) => {
        const q = app.deps.hub.queue(app.deps.hub.queueFor('trade', m));
        const before = await q.getActiveCount();
        const answer = Promise.resolve(f());
        await waitFor('the batch in flight', async () => (await q.getActiveCount()) > before);
        return { answer };
      };
      // a and b trade again the moment they are answered.
      const again = (r: Answer, f: Send) => Promise.resolve(f()).then((r2) => [r, r2]);
      const fa = (await inFlight(m1, buy(a, m1))).answer.then((r) => again(r, buy(a, m1)));
      const fb = (await inFlight(m2, buy(b, m2))).answer.then((r) => again(r, buy(b, m2)));
      const first = [fa, fb];
      const received = laneBatches(app.deps).received();
      const waiting = [Promise.resolve(buy(c, m1)()), Promise.resolve(buy(d, m2)())];
      await waitFor('c and d at their lanes', async () => laneBatches(app.deps).received() === received + 2, 20_000, 5);
      await holder.query('ROLLBACK');
      const [[ra, ra2], [rb, rb2]] = await Promise.all(first);
      const [rc, rd] = await Promise.all(waiting);
      const all = [ra, rb, rc, rd, ra2, rb2];
      for (const r of all) expect(r.status).toBe(200);
      const [xa, xb, xc, xd, xa2, xb2] = await xminsOf(all);
      expect(xa).not.toBe(xb);
      // c, d and the second trades of a and b: one transaction over both lanes' books.
      expect(new Set([xc, xd, xa2, xb2]).size).toBe(1);
      expect([xa, xb]).not.toContain(xc);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });

  it('a closed group that mostly comes back waits twice as long for its straggler, and the lane does not stop waiting after it', async () => {
    const marketId = await bookOffLanes(backedOff);
    const [a, b, c] = [await trader(app, ws, 100), await trader(app, ws, 100), await trader(app, ws, 100)];
    const buy = (who: typeof a) => () => trade(app, ws, who, { marketId, direction: 'higher', amount: 1 });
    await settle();

    // a's trade in flight, b's and c's waiting; a trades again on its answer, so b, c and a's second
    // trade go as one batch, and nothing arrives while it is in flight (a closed group of three).
    // Then b and c trade again the moment they are answered, and a does not come back.
    const answeredAt = new Map<string, number>();
    const once = (who: typeof a) => () => Promise.resolve(buy(who)()).then((r) => [r]);
    const twice = (who: typeof a, name: string) => () =>
      Promise.resolve(buy(who)()).then(async (r) => {
        answeredAt.set(name, performance.now());
        return [r, await buy(who)()];
      });
    const [[ra], [rb, rb2], [rc, rc2], [ra2]] = await gathered(app, marketId, once(a), [twice(b, 'b'), twice(c, 'c')], undefined, once(a));
    const back = performance.now();
    for (const r of [ra, rb, rb2, rc, rc2, ra2]) expect(r.status).toBe(200);
    const [xa, xb, xc, xa2, xb2, xc2] = await xminsOf([ra, rb, rc, ra2, rb2, rc2]);
    expect(xa).not.toBe(xb);
    expect(new Set([xb, xc, xa2]).size).toBe(1);
    // b's and c's second trades went together once the wait ran out: twice LINGER_MS, not once.
    expect(xb2).toBe(xc2);
    expect(xb2).not.toBe(xb);
    expect(back - Math.max(answeredAt.get('b')!, answeredAt.get('c')!)).toBeGreaterThan(1.5 * LINGER_MS);

    // Two of three came back: a straggler, not a group that is gone, so the lane still waits. As in
    // the first test's first round: b, c and a's second trade go as one.
    await settle();
    const [x3a, x3b, x3c, x3again] = await round(marketId, buy(a), [buy(b), buy(c)], buy(a));
    expect(new Set([x3b, x3c, x3again]).size).toBe(1);
    expect(x3a).not.toBe(x3b);
  });
});

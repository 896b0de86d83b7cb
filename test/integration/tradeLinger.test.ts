import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { freshBookId, gathered, trade, trader } from '../helpers/markets';

/**
 * A free lane waits a moment for the callers just answered (tradeBatches.ts, lingerLeft), so that
 * they and the requests that waited for that batch go as one. The wait is long here (1 s) so that a
 * supertest request sent on an answer surely comes within it on a busy machine; the lanes' state is
 * this app's own (a file of its own: no earlier wait has run out on its lanes).
 */
let app: TestApp;
let ws: TestWorkspace;

const LINGER_MS = 1000;
useTestApp((a) => (app = a), { TRADE_BATCH_INFLIGHT: '1', TRADE_BATCH_LINGER_MS: String(LINGER_MS) });
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});
afterEach(async () => expectLedgerSound(app.deps));

type Send = () => ReturnType<typeof trade>;

/**
 * One round on a held book: `first` in flight, `rest` waiting behind it, `again` (if any) sent when
 * `first` is answered. Every trade applies; returns the transaction (xmin) that wrote each, in that order.
 */
async function round(marketId: string, first: Send, rest: Send[], again?: Send): Promise<string[]> {
  const answers = await gathered(app, marketId, first, rest, undefined, again);
  for (const r of answers) expect(r.status).toBe(200);
  const ids = answers.map((r) => r.body.tradeId as string);
  const rows: Array<{ id: string; x: string }> = await app.deps.ds.query(`SELECT id, xmin::text AS x FROM trades WHERE id = ANY($1::uuid[])`, [ids]);
  const by = new Map(rows.map((r) => [r.id, r.x]));
  return ids.map((id) => by.get(id)!);
}

/**
 * Let the last answers age past a wait: callers answered and not back would otherwise make the next
 * round's first request wait for them (its lane would linger before its batch).
 */
const settle = () => new Promise((res) => setTimeout(res, LINGER_MS + 100));

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

  it('a caller answered on one lane that trades on another counts as back: the first lane goes then, without its wait running out', async () => {
    const marketId = await bookOffLanes(backedOff);
    const elsewhere = await bookOffLanes(new Set([app.deps.hub.queueFor('trade', marketId)]));
    const [a, b, c] = [await trader(app, ws, 100), await trader(app, ws, 100), await trader(app, ws, 100)];
    const buy = (who: typeof a, m = marketId) => () => trade(app, ws, who, { marketId: m, direction: 'higher', amount: 1 });

    // a's trade in flight, b's and c's waiting; answered, a trades on the other lane's book.
    await round(marketId, buy(a), [buy(b), buy(c)], buy(a, elsewhere));

    // Had the first lane's wait run out (nobody came back to it), it would not wait now: that a's
    // second trade joins b's and c's shows that a's trade elsewhere ended the wait before.
    await settle();
    const [, xb, xc, xagain] = await round(marketId, buy(a), [buy(b), buy(c)], buy(a));
    expect(new Set([xb, xc, xagain]).size).toBe(1);
  });
});

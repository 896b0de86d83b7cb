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

/** The transaction (xmin) that wrote each trade, by trade id. */
async function writtenBy(tradeIds: string[]): Promise<Map<string, string>> {
  const rows: Array<{ id: string; x: string }> = await app.deps.ds.query(`SELECT id, xmin::text AS x FROM trades WHERE id = ANY($1::uuid[])`, [tradeIds]);
  return new Map(rows.map((r) => [r.id, r.x]));
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

    // a's trade in flight, b's and c's waiting for it; a trades again the moment it is answered.
    const round1 = await gathered(app, marketId, buy(a), [buy(b), buy(c)], undefined, buy(a));
    for (const r of round1) expect(r.status).toBe(200);
    const ids1 = round1.map((r) => r.body.tradeId as string);
    const by1 = await writtenBy(ids1);
    expect(by1.size).toBe(4);
    // b, c and a's second trade: one transaction (without the wait, b and c would have gone at
    // once when a was answered, and a's second trade in a batch of its own).
    expect(new Set([by1.get(ids1[1]), by1.get(ids1[2]), by1.get(ids1[3])]).size).toBe(1);
    expect(by1.get(ids1[0])).not.toBe(by1.get(ids1[1]));

    // Nobody comes back: b's and c's requests go when the wait runs out (they are answered).
    backedOff.add(app.deps.hub.queueFor('trade', marketId));
    await settle();
    const round2 = await gathered(app, marketId, buy(a), [buy(b), buy(c)]);
    for (const r of round2) expect(r.status).toBe(200);

    // That wait ran out, so the lane's next batches go at once: a's second trade is in a batch of
    // its own, after b's and c's.
    await settle();
    const round3 = await gathered(app, marketId, buy(a), [buy(b), buy(c)], undefined, buy(a));
    for (const r of round3) expect(r.status).toBe(200);
    const ids3 = round3.map((r) => r.body.tradeId as string);
    const by3 = await writtenBy(ids3);
    expect(by3.get(ids3[1])).toBe(by3.get(ids3[2]));
    expect(by3.get(ids3[3])).not.toBe(by3.get(ids3[1]));
  });

  it('a caller answered on one lane that trades on another counts as back: the first lane goes then, without its wait running out', async () => {
    const marketId = await bookOffLanes(backedOff);
    const elsewhere = await bookOffLanes(new Set([app.deps.hub.queueFor('trade', marketId)]));
    const [a, b, c] = [await trader(app, ws, 100), await trader(app, ws, 100), await trader(app, ws, 100)];
    const buy = (who: typeof a, m = marketId) => () => trade(app, ws, who, { marketId: m, direction: 'higher', amount: 1 });

    // a's trade in flight, b's and c's waiting; answered, a trades on the other lane's book.
    const round1 = await gathered(app, marketId, buy(a), [buy(b), buy(c)], undefined, buy(a, elsewhere));
    for (const r of round1) expect(r.status).toBe(200);

    // Had the first lane's wait run out (nobody came back to it), it would not wait now: that a's
    // second trade joins b's and c's shows that a's trade elsewhere ended the wait before.
    await settle();
    const round2 = await gathered(app, marketId, buy(a), [buy(b), buy(c)], undefined, buy(a));
    for (const r of round2) expect(r.status).toBe(200);
    const ids = round2.map((r) => r.body.tradeId as string);
    const by = await writtenBy(ids);
    expect(new Set([by.get(ids[1]), by.get(ids[2]), by.get(ids[3])]).size).toBe(1);
  });
});

import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { freshBookId, gathered, trade, trader } from '../helpers/markets';

/**
 * A free lane waits a moment for the callers its last batch answered (tradeBatches.ts, lingerLeft),
 * so that they and the requests that waited for that batch go as one. The wait is long here (1 s)
 * so that a supertest request sent on an answer surely comes within it on a busy machine; the
 * lane's state is this app's own (a file of its own: no earlier wait has run out on its lanes).
 */
let app: TestApp;
let ws: TestWorkspace;

useTestApp((a) => (app = a), { TRADE_BATCH_INFLIGHT: '1', TRADE_BATCH_LINGER_MS: '1000' });
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});
afterEach(async () => expectLedgerSound(app.deps));

/** The transaction (xmin) that wrote each trade, by trade id. */
async function writtenBy(tradeIds: string[]): Promise<Map<string, string>> {
  const rows: Array<{ id: string; x: string }> = await app.deps.ds.query(`SELECT id, xmin::text AS x FROM trades WHERE id = ANY($1::uuid[])`, [tradeIds]);
  return new Map(rows.map((r) => [r.id, r.x]));
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
    const round2 = await gathered(app, marketId, buy(a), [buy(b), buy(c)]);
    for (const r of round2) expect(r.status).toBe(200);

    // That wait ran out, so the lane's next batches go at once: a's second trade is in a batch of
    // its own, after b's and c's.
    const round3 = await gathered(app, marketId, buy(a), [buy(b), buy(c)], undefined, buy(a));
    for (const r of round3) expect(r.status).toBe(200);
    const ids3 = round3.map((r) => r.body.tradeId as string);
    const by3 = await writtenBy(ids3);
    expect(by3.get(ids3[1])).toBe(by3.get(ids3[2]));
    expect(by3.get(ids3[3])).not.toBe(by3.get(ids3[1]));
  });
});

import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { BATCH_STAGES, BATCH_TIMELINE_CHANNEL, type BatchMark } from '../../src/services/trading/batchTimeline';
import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { freshBookId, gathered, trade, trader } from '../helpers/markets';

/**
 * The trade batches' timeline (bench/cycle.ts reads it): every batch the lanes send passes each
 * stage once, in order, under its first request's id, with its size and its requests' arrivals.
 */
let app: TestApp;
let ws: TestWorkspace;

useTestApp((a) => (app = a), { TRADE_BATCH_INFLIGHT: '1', TRADE_APPLY_AT_ONCE: 'false' }); // the lane's queue path (issue 66: a batch applies at once otherwise)
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});
afterEach(async () => expectLedgerSound(app.deps));

it('marks each batch sent, started, opened, priced, written and answered, in that order', async () => {
  const marks: BatchMark[] = [];
  const listen = (m: unknown) => marks.push(m as BatchMark);
  subscribe(BATCH_TIMELINE_CHANNEL, listen);
  try {
    const marketId = await freshBookId(app, ws);
    const who = await Promise.all([0, 1, 2, 3].map(() => trader(app, ws, 100)));
    const buy = (i: number) => () => trade(app, ws, who[i], { marketId, direction: 'higher', amount: 2 });
    const answers = await gathered(app, marketId, buy(0), [buy(1), buy(2), buy(3)]);
    for (const r of answers) expect(r.status).toBe(200);
  } finally {
    unsubscribe(BATCH_TIMELINE_CHANNEL, listen);
  }
  const batches = new Map<string, BatchMark[]>();
  for (const m of marks) batches.set(m.batch, [...(batches.get(m.batch) ?? []), m]);
  // The first request went alone; the three held behind it went as one batch.
  expect([...batches.values()].map((ms) => ms.find((m) => m.stage === 'sent')?.trades)).toEqual([1, 3]);
  for (const ms of batches.values()) {
    expect(ms.map((m) => m.stage).filter((s) => s !== 'answered')).toEqual(BATCH_STAGES.filter((s) => s !== 'answered'));
    const at = Object.fromEntries(ms.map((m) => [m.stage, m.at]));
    for (let i = 1; i < 5; i++) expect(at[BATCH_STAGES[i]]).toBeGreaterThanOrEqual(at[BATCH_STAGES[i - 1]]);
    // The answer is heard after the write is priced (by the commit's own notice, which may beat the commit's reply).
    expect(at.answered).toBeGreaterThanOrEqual(at.priced);
    const sent = ms.find((m) => m.stage === 'sent')!;
    expect(sent.firstArrival).toBeLessThanOrEqual(sent.lastArrival!);
    expect(sent.lastArrival).toBeLessThanOrEqual(sent.at);
  }
  // Nothing is published once nobody listens.
  const publish = jest.spyOn(channel(BATCH_TIMELINE_CHANNEL), 'publish');
  try {
    const r = await trade(app, ws, await trader(app, ws, 10), { marketId: await freshBookId(app, ws), direction: 'lower', amount: 1 });
    expect(r.status).toBe(200);
    expect(publish).not.toHaveBeenCalled();
  } finally {
    publish.mockRestore();
  }
});

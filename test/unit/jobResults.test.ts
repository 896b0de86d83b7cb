import { z } from 'zod';
import { queueFamilies, resultSchema, tradeOutcomes, type QueueFamilyName } from '../../jobs/definitions';

/** What the queue does to a result: JSON both ways (BullMQ stores returnvalue as JSON). */
const overTheQueue = (family: QueueFamilyName, job: string, value: unknown) => resultSchema(family, job)!.parse(JSON.parse(JSON.stringify(z.encode(resultSchema(family, job)!, value) ?? null)));

describe('job results', () => {
  it('every declared job has a result schema', () => {
    for (const def of Object.values(queueFamilies)) {
      expect(Object.keys(def.results).sort()).toEqual(Object.keys(def.jobs).sort());
    }
  });

  it('bigints travel as decimal strings and come back as bigints', () => {
    const settle = { marketId: 'm', settled: true, payout: 12_345_678_901_234_567_890n };
    expect(z.encode(queueFamilies.trade.results.settle, settle)).toEqual({ ...settle, payout: '12345678901234567890' });
    expect(overTheQueue('trade', 'settle', settle)).toEqual(settle);
    const resolve = { outcomes: [{ marketId: 'a', outcome: 'resolved', value: 3, payout: -5n }, { marketId: 'b', outcome: 'waiting' }] };
    expect(overTheQueue('trade', 'resolve', resolve)).toEqual(resolve);
  });

  it('a trade outcome keeps its whole body in its notice; a job run for its effect comes back as null', () => {
    const trade = { outcomes: [{ ok: true, body: { tradeId: 't', shares: 1.5, nested: { a: [1] } } }, { ok: false, body: { code: 'price_moved' } }] };
    expect(tradeOutcomes.parse(JSON.parse(JSON.stringify(trade)))).toEqual(trade);
    expect(tradeOutcomes.safeParse({ outcomes: [{ ok: true, body: 'x' }] }).success).toBe(false);
    // The trade job itself returns nothing: its outcomes go out in its commit's notices.
    expect(overTheQueue('trade', 'trade', undefined)).toBeNull();
    expect(() => z.encode(queueFamilies.trade.results.trade, trade as never)).toThrow();
    expect(overTheQueue('chain', 'verifyDeposit', undefined)).toBeNull();
  });

  it('a result that does not match its schema is refused on both sides', () => {
    expect(() => z.encode(queueFamilies.trade.results.settle, { marketId: 'm', settled: true, payout: '1' } as never)).toThrow();
    expect(resultSchema('trade', 'settle')!.safeParse({ marketId: 'm', settled: true, payout: 1.5 }).success).toBe(false);
    expect(resultSchema('horizons', 'expireOrders')!.safeParse({}).success).toBe(false);
  });
});

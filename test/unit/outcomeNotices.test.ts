import fc from 'fast-check';
import { outcomeNotices } from '../../src/services/trading/outcomeNotices';
import type { TradeOutcome } from '../../src/domain/outcomes';

/** A batch's outcomes announced in Postgres notices (payloads must stay under 8000 bytes). */
describe('outcome notices', () => {
  const outcomeArb = fc.record({
    ok: fc.boolean(),
    // Sizes around the limit, multi-byte text included (the limit is in bytes, not characters).
    body: fc.record({ note: fc.oneof(fc.string({ maxLength: 50 }), fc.string({ minLength: 3000, maxLength: 9000 }), fc.string({ unit: 'grapheme', maxLength: 3000 })) }),
  }) as fc.Arbitrary<TradeOutcome>;

  it('each notice fits, every request is announced once in order, and an outcome is null only when it cannot fit alone', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.uuid(), outcomeArb), { minLength: 1, maxLength: 40 }), (pairs) => {
        const ids = pairs.map(([id]) => id);
        const notices = outcomeNotices(ids, pairs.map(([, o]) => o));
        for (const n of notices) expect(Buffer.byteLength(n)).toBeLessThan(8000);
        const heard = notices.flatMap((n) => JSON.parse(n) as Array<[string, TradeOutcome | null]>);
        expect(heard.map(([id]) => id)).toEqual(ids);
        heard.forEach(([id, o], i) => {
          const alone = Buffer.byteLength(JSON.stringify([id, pairs[i][1]])) + 2;
          if (o === null) expect(alone).toBeGreaterThan(7900);
          else expect(o).toEqual(pairs[i][1]);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('small outcomes share one notice', () => {
    const ids = ['a', 'b', 'c'];
    const notices = outcomeNotices(ids, ids.map((id) => ({ ok: true, body: { id } }) as unknown as TradeOutcome));
    expect(notices).toHaveLength(1);
  });
});

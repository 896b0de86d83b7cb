import fc from 'fast-check';
import { lingerLeft } from '../../src/services/trading/tradeBatches';

/** How long a free trade lane waits for the callers its last batch answered (tradeBatches.ts). */
describe('lingerLeft', () => {
  const state = fc.record({
    lingerMs: fc.integer({ min: 0, max: 1000 }),
    batchMax: fc.integer({ min: 1, max: 256 }),
    expected: fc.integer({ min: 0, max: 300 }),
    waiting: fc.integer({ min: 1, max: 300 }),
    answeredAt: fc.integer({ min: 0, max: 10_000 }),
    since: fc.integer({ min: 0, max: 2000 }),
  });
  const left = (s: { lingerMs: number; batchMax: number; expected: number; waiting: number; answeredAt: number; since: number }) => lingerLeft({ ...s, now: s.answeredAt + s.since });

  it('waits only while fewer have come than were about the lane, never past lingerMs after the answer, and never for one caller', () => {
    fc.assert(
      fc.property(state, (s) => {
        const ms = left(s);
        const want = Math.min(s.expected, s.batchMax);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(s.lingerMs);
        // Sends now when: lingering is off, the last batch answered a lone caller (and none waited),
        // everyone expected is here (or a full batch), or the wait has run out.
        const sendsNow = s.lingerMs === 0 || want < 2 || s.waiting >= want || s.since >= s.lingerMs;
        expect(ms === 0).toBe(sendsNow);
        if (!sendsNow) expect(ms).toBe(s.lingerMs - s.since);
      }),
    );
  });

  it('the cases by name', () => {
    const base = { lingerMs: 10, batchMax: 64, answeredAt: 100, now: 103 };
    // Eight callers about the lane (four answered, four waiting), four here: wait the 7 ms left.
    expect(lingerLeft({ ...base, expected: 8, waiting: 4 })).toBe(7);
    // All eight back: go.
    expect(lingerLeft({ ...base, expected: 8, waiting: 8 })).toBe(0);
    // One trader alone: never waits.
    expect(lingerLeft({ ...base, expected: 1, waiting: 0 })).toBe(0);
    // A full batch is there though more were expected: go.
    expect(lingerLeft({ ...base, batchMax: 4, expected: 8, waiting: 4 })).toBe(0);
    // The wait has run out.
    expect(lingerLeft({ ...base, now: 111, expected: 8, waiting: 4 })).toBe(0);
    // Lingering off.
    expect(lingerLeft({ ...base, lingerMs: 0, expected: 8, waiting: 4 })).toBe(0);
  });
});

import fc from 'fast-check';
import { backoffAfterWait, lingerLeft } from '../../src/services/trading/tradeBatches';

/** How long a free trade lane waits for the callers just answered (tradeBatches.ts). */
describe('lingerLeft', () => {
  const state = fc.record({
    lingerMs: fc.integer({ min: 0, max: 1000 }),
    batchMax: fc.integer({ min: 1, max: 256 }),
    around: fc.integer({ min: 0, max: 300 }),
    returning: fc.integer({ min: 0, max: 300 }),
    othersInFlight: fc.integer({ min: 0, max: 300 }),
    waiting: fc.integer({ min: 1, max: 300 }),
    answeredAt: fc.integer({ min: 0, max: 10_000 }),
    since: fc.integer({ min: 0, max: 2000 }),
  });

  it('waits only while answered callers are out or other lanes are in flight and the batch is not full, never past lingerMs after the answer, and never for one caller', () => {
    fc.assert(
      fc.property(state, (s) => {
        const ms = lingerLeft({ ...s, now: s.answeredAt + s.since });
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(s.lingerMs);
        // Sends now when: lingering is off, the lane had a lone caller about it, every answered
        // caller has sent again and no other lane's batch is in flight whose callers would fit in
        // one batch with those waiting, a full batch is waiting, or the wait has run out.
        const othersFit = s.othersInFlight > 0 && s.waiting + s.othersInFlight < s.batchMax;
        const sendsNow = s.lingerMs === 0 || s.around < 2 || (s.returning === 0 && !othersFit) || s.waiting >= s.batchMax || s.since >= s.lingerMs;
        expect(ms === 0).toBe(sendsNow);
        if (!sendsNow) expect(ms).toBe(s.lingerMs - s.since);
      }),
    );
  });

  it('the cases by name', () => {
    const base = { lingerMs: 10, batchMax: 64, answeredAt: 100, now: 103, othersInFlight: 0 };
    // Eight callers about the lane, four answered and not back: wait the 7 ms left.
    expect(lingerLeft({ ...base, around: 8, returning: 4, waiting: 4 })).toBe(7);
    // All back (here or on another lane): go.
    expect(lingerLeft({ ...base, around: 8, returning: 0, waiting: 6 })).toBe(0);
    // All back, but another lane's batch is in flight: wait for it, so the two lanes' requests go as one batch.
    expect(lingerLeft({ ...base, around: 8, returning: 0, othersInFlight: 4, waiting: 6 })).toBe(7);
    // ... but not when that batch's callers and those waiting here would not fit in one batch (a heavy load: the lanes run side by side).
    expect(lingerLeft({ ...base, around: 80, returning: 0, othersInFlight: 60, waiting: 6 })).toBe(0);
    // One trader alone: never waits.
    expect(lingerLeft({ ...base, around: 1, returning: 1, waiting: 1 })).toBe(0);
    // A full batch is there: go.
    expect(lingerLeft({ ...base, batchMax: 4, around: 8, returning: 4, waiting: 4 })).toBe(0);
    // The wait has run out.
    expect(lingerLeft({ ...base, now: 111, around: 8, returning: 4, waiting: 4 })).toBe(0);
    // Lingering off.
    expect(lingerLeft({ ...base, lingerMs: 0, around: 8, returning: 4, waiting: 4 })).toBe(0);
  });
});

/** How many batches go without a wait after a wait ran out (tradeBatches.ts). */
describe('backoffAfterWait', () => {
  it('keeps waiting (0) exactly when the group was closed and more than half of it came back; otherwise backs off', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 }), (quiet, owed, out) => {
        const returning = Math.min(out, owed);
        const n = backoffAfterWait({ quiet, owed, returning });
        const stays = quiet && 2 * (owed - returning) > owed;
        expect(n === 0).toBe(stays);
        if (!stays) expect(n).toBeGreaterThan(1);
      }),
    );
  });

  it('the cases by name', () => {
    // Eight callers in one batch, nothing else arrived meanwhile, seven back: a straggler.
    expect(backoffAfterWait({ quiet: true, owed: 8, returning: 1 })).toBe(0);
    // Half back is not more than half.
    expect(backoffAfterWait({ quiet: true, owed: 8, returning: 4 })).toBeGreaterThan(0);
    // Nobody back (far clients): back off.
    expect(backoffAfterWait({ quiet: true, owed: 8, returning: 8 })).toBeGreaterThan(0);
    // Requests arrived while the batch was in flight (an open load): back off, however many came.
    expect(backoffAfterWait({ quiet: false, owed: 8, returning: 1 })).toBeGreaterThan(0);
  });
});

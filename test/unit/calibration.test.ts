import fc from 'fast-check';
import {
  addSums,
  binOf,
  bookScore,
  earningsOf,
  emptySums,
  markAtConsensus,
  normalisedError,
  horizonOf,
  benchmarkError,
  RELIABILITY_BINS,
  scoresOf,
  type ScoredTrade,
} from '../../src/domain/calibration';

const NANO = 1_000_000_000n;
const trade = (p: number, rangeMin = 0, rangeMax = 100, kind: ScoredTrade['kind'] = 'buy'): ScoredTrade => ({
  kind,
  probabilityAfter: p,
  consensusAfter: rangeMin + p * (rangeMax - rangeMin),
});

describe('the seasons guide worked example', () => {
  // Range 0..100, resolved at V = 75 (v = 0.75); the participant's three trades left p = 0.5, 0.8, 0.7.
  const sums = bookScore([trade(0.5), trade(0.8), trade(0.7)], { value: 75, rangeMin: 0, rangeMax: 100 });
  const s = scoresOf(sums);

  it('calibration = 1 - Brier = 1 - (0.0625 + 0.0025 + 0.0025) / 3 = 0.9775', () => {
    expect(s.brier).toBe(0.0225);
    expect(s.calibration).toBe(0.9775);
  });
  it('accuracy = 1 - MAE = 1 - (0.25 + 0.05 + 0.05) / 3 = 0.883333333', () => {
    expect(s.meanAbsError).toBe(0.116666667);
    expect(s.accuracy).toBe(0.883333333);
  });
  it('reliability bins: 0.5 in [0.5,0.6), 0.7 in [0.7,0.8), 0.8 in [0.8,0.9); each outcome 0.75', () => {
    const used = s.reliability.filter((b) => b.trades > 0);
    expect(used).toEqual([
      { from: 0.5, to: 0.6, trades: 1, meanForecast: 0.5, meanOutcome: 0.75 },
      { from: 0.7, to: 0.8, trades: 1, meanForecast: 0.7, meanOutcome: 0.75 },
      { from: 0.8, to: 0.9, trades: 1, meanForecast: 0.8, meanOutcome: 0.75 },
    ]);
    expect(s.reliability).toHaveLength(RELIABILITY_BINS);
  });
  it('earnings: settled 8 - 6 = 2, open 4 x 0.25 - 1.5 = -0.5, total 1.5', () => {
    // Resolved book: 10 higher + 2 lower shares pay 10 x 0.75 + 2 x 0.25 = 8 credits, net cost 6.
    const payout = markAtConsensus({ sharesHigher: 10n * NANO, sharesLower: 2n * NANO, netCost: 0n, probability: 0.75 });
    expect(payout).toBe(8n * NANO);
    const e = earningsOf(payout - 6n * NANO, [{ sharesHigher: 4n * NANO, sharesLower: 0n, netCost: 1_500_000_000n, probability: 0.25 }]);
    expect(e).toEqual({ settled: 2n * NANO, open: -500_000_000n, total: 1_500_000_000n });
  });
});

describe('calibration definitions', () => {
  it('redemptions are not scored; nothing scored gives nulls', () => {
    const s = scoresOf(bookScore([trade(0.3, 0, 10, 'redeem')], { value: 3, rangeMin: 0, rangeMax: 10 }));
    expect(s).toMatchObject({ forecasts: 0, calibration: null, accuracy: null, brier: null, meanAbsError: null });
  });
  it('a value above the range counts as the top of the range (v = 1), below as the bottom', () => {
    expect(scoresOf(bookScore([trade(1, 0, 10)], { value: 50, rangeMin: 0, rangeMax: 10 })).calibration).toBe(1);
    expect(scoresOf(bookScore([trade(0, 5, 10)], { value: 0, rangeMin: 5, rangeMax: 10 })).accuracy).toBe(1);
  });
  it('binOf: [k/10, (k+1)/10), the last bin closed at 1', () => {
    expect([0, 0.0999, 0.1, 0.55, 0.9, 1].map(binOf)).toEqual([0, 0, 1, 5, 9, 9]);
  });
  it('horizons: a day, a week, 31 days, 366 days, longer (each bound inclusive)', () => {
    const day = 86_400_000;
    expect([0, day, day + 1, 7 * day, 31 * day, 31 * day + 1, 366 * day, 400 * day].map(horizonOf)).toEqual(['day', 'day', 'week', 'week', 'month', 'year', 'year', 'longer']);
    expect(benchmarkError(80, { value: 75, rangeMin: 0, rangeMax: 100 })).toBe(50_000_000n);
  });
  it('a book without liquidity marks at zero worth', () => {
    expect(markAtConsensus({ sharesHigher: 5n, sharesLower: 5n, netCost: 1n, probability: null })).toBe(0n);
  });
});

const arbTrades = fc.array(
  fc.record({ kind: fc.constantFrom('buy' as const, 'sell' as const, 'redeem' as const), p: fc.double({ min: 0, max: 1, noNaN: true }) }),
  { maxLength: 12 },
);
const arbBook = fc
  .record({ rangeMin: fc.integer({ min: 0, max: 1000 }), width: fc.integer({ min: 1, max: 10000 }), value: fc.double({ min: 0, max: 20000, noNaN: true }) })
  .map((b) => ({ rangeMin: b.rangeMin, rangeMax: b.rangeMin + b.width, value: b.value }));

describe('calibration properties', () => {
  it('property: summing book by book equals scoring every trade at once, and scores stay in [0, 1]', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(arbTrades, arbBook), { minLength: 1, maxLength: 6 }), (books) => {
        const scored = books.map(([ts, o]) => ({ o, ts: ts.map((t) => trade(t.p, o.rangeMin, o.rangeMax, t.kind)) }));
        const incremental = scored.reduce((acc, b) => addSums(acc, bookScore(b.ts, b.o)), emptySums());
        // From scratch: every trade on its own, summed in the reverse order.
        const fromScratch = scored
          .flatMap((b) => b.ts.map((t) => bookScore([t], b.o)))
          .reverse()
          .reduce((acc, x) => addSums(acc, x), emptySums());
        expect(incremental).toEqual(fromScratch);
        const s = scoresOf(incremental);
        const n = scored.reduce((k, b) => k + b.ts.filter((t) => t.kind !== 'redeem').length, 0);
        expect(s.forecasts).toBe(n);
        expect(s.reliability.reduce((k, b) => k + b.trades, 0)).toBe(n);
        if (n === 0) return expect(s.calibration).toBeNull();
        accepted++;
        for (const x of [s.calibration!, s.accuracy!]) {
          expect(x).toBeGreaterThanOrEqual(0);
          expect(x).toBeLessThanOrEqual(1);
        }
        // MAE dominates the Brier score's square root bound: Brier <= MAE (each term |e|^2 <= |e| for |e| <= 1), up to rounding.
        expect(s.brier!).toBeLessThanOrEqual(s.meanAbsError! + 1e-8);
        for (const b of s.reliability) if (b.trades) expect(b.meanForecast!).toBeGreaterThanOrEqual(b.from - 1e-9);
      }),
      { numRuns: 400 },
    );
    // Most generated histories hold at least one buy or sell (measured 391 of 400).
    expect(accepted).toBeGreaterThan(300);
  });

  it('property: the normalised error of the consensus is |p - v|', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), arbBook, (p, o) => {
        const c = o.rangeMin + p * (o.rangeMax - o.rangeMin);
        const v = Math.min(1, Math.max(0, (o.value - o.rangeMin) / (o.rangeMax - o.rangeMin)));
        accepted++;
        expect(Math.abs(normalisedError(c, o) - Math.abs(p - v))).toBeLessThan(1e-9);
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBe(300);
  });

  it('property: settled + open = total exactly, and a position marked at p = 1 or 0 is worth its higher or lower shares', () => {
    let accepted = 0;
    const pos = fc.record({
      sharesHigher: fc.bigInt({ min: 0n, max: 10n ** 15n }),
      sharesLower: fc.bigInt({ min: 0n, max: 10n ** 15n }),
      netCost: fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }),
      probability: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.array(pos, { maxLength: 8 }), (settled, open) => {
        const e = earningsOf(settled, open);
        expect(e.settled + e.open).toBe(e.total);
        expect(e.settled).toBe(settled);
        for (const p of open) {
          const m = markAtConsensus(p);
          expect(m).toBeGreaterThanOrEqual(0n);
          expect(m).toBeLessThanOrEqual(p.sharesHigher > p.sharesLower ? p.sharesHigher : p.sharesLower);
        }
        if (open.length) accepted++;
        if (open[0]) {
          expect(markAtConsensus({ ...open[0], probability: 1 })).toBe(open[0].sharesHigher);
          expect(markAtConsensus({ ...open[0], probability: 0 })).toBe(open[0].sharesLower);
        }
      }),
      { numRuns: 300 },
    );
    // Histories with at least one open position (measured 258 of 300).
    expect(accepted).toBeGreaterThan(200);
  });
});

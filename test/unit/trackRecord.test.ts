import fc from 'fast-check';
import { adviceOf, MIN_MONTHS, PERIOD_DECISIONS, scoreRealised, summariseTrackRecord, type DecidedPair, type ScoredRecord } from '../../src/domain/trackRecord';

const pair = (over: Partial<DecidedPair> = {}): DecidedPair => ({
  decision: 'approved',
  rangeMin: 0,
  rangeMax: 1000,
  approvedConsensus: 600,
  declinedConsensus: 450,
  lastReading: 500,
  averageChange: null,
  ...over,
});

function record(p: DecidedPair, value: number | null, decidedAt: Date, status: ScoredRecord['status'] = value === null ? 'pending' : 'realised'): ScoredRecord {
  const s = value === null ? {} : scoreRealised(p, value);
  return { ...s, decidedAt, decision: p.decision, status, advice: adviceOf(p), rangeWidth: p.rangeMax - p.rangeMin };
}

describe('scoring one decided pair', () => {
  it('by hand: approved at 600 over a last reading of 500, realised 640', () => {
    const s = scoreRealised(pair(), 640);
    expect(s).toEqual({ marketError: 40, persistenceError: 140, averageChangeError: 140, directionHeld: true, averageChangeDirectionHeld: null, forecastP: 0.6, outcomeV: 0.64 });
  });

  it('declined: the declined consensus is the forecast; the average change moves the rule', () => {
    const s = scoreRealised(pair({ decision: 'declined', approvedConsensus: 700, declinedConsensus: 420, lastReading: 520, averageChange: 140 }), 380);
    expect(s.marketError).toBeCloseTo(-40, 9);
    expect(s.persistenceError).toBe(-140);
    expect(s.averageChangeError).toBe(-280);
    expect(s).toMatchObject({ directionHeld: true, averageChangeDirectionHeld: false });
  });

  it('clamps the realised value and the forecasts into the range, as the payout does', () => {
    const s = scoreRealised(pair({ lastReading: 1200 }), 1500);
    expect(s).toMatchObject({ marketError: 400, persistenceError: 0, outcomeV: 1 });
  });

  it('never scores without a forecast: no consensus, no last reading', () => {
    expect(scoreRealised(pair({ approvedConsensus: null, lastReading: null }), 640)).toMatchObject({ marketError: null, persistenceError: null, averageChangeError: null, directionHeld: null, forecastP: null });
  });

  it('advice: the higher consensus; none without both or on a tie', () => {
    expect(adviceOf(pair())).toBe('approved');
    expect(adviceOf(pair({ approvedConsensus: 300, declinedConsensus: 600 }))).toBe('declined');
    expect(adviceOf(pair({ declinedConsensus: 600, approvedConsensus: 600 }))).toBeNull();
    expect(adviceOf(pair({ declinedConsensus: null }))).toBeNull();
  });

  it('property: errors are within the range width and the outcome within [0, 1]', () => {
    const v = fc.double({ min: -2000, max: 3000, noNaN: true });
    fc.assert(
      fc.property(v, v, v, v, fc.boolean(), (a, d, last, value, approved) => {
        const s = scoreRealised(pair({ decision: approved ? 'approved' : 'declined', approvedConsensus: a, declinedConsensus: d, lastReading: last }), value);
        for (const e of [s.marketError, s.persistenceError]) expect(Math.abs(e!)).toBeLessThanOrEqual(1000 + 1e-9);
        expect(s.outcomeV).toBeGreaterThanOrEqual(0);
        expect(s.outcomeV).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('summaries', () => {
  const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n));

  it('never scores the unrealised: pending and voided count as such and add no error', () => {
    const rs = [record(pair(), 640, day(0)), record(pair(), null, day(1)), record(pair(), null, day(2), 'voided')];
    const s = summariseTrackRecord(rs);
    expect(s).toMatchObject({ decisions: 3, realised: 1, pending: 1, voided: 1 });
    expect(s.market).toEqual({ decisions: 1, meanError: 0.04, hitRate: { hits: 1, scored: 1, rate: 1 } });
  });

  it('periods: runs of decisions while the record spans few months, then calendar months', () => {
    const few = Array.from({ length: PERIOD_DECISIONS + 1 }, (_, i) => record(pair(), 640, day(i)));
    expect(summariseTrackRecord(few).periods.map((p) => p.label)).toEqual([`decisions 1-${PERIOD_DECISIONS}`, `decisions ${PERIOD_DECISIONS + 1}-${PERIOD_DECISIONS + 1}`]);
    const months = Array.from({ length: MIN_MONTHS }, (_, i) => record(pair(), 640, new Date(Date.UTC(2026, i, 5))));
    const s = summariseTrackRecord(months);
    expect(s.periodKind).toBe('month');
    expect(s.periods.map((p) => p.label)).toEqual(['2026-01', '2026-02', '2026-03']);
    expect(s.periods[2].toDate.hitRate).toEqual({ hits: 3, scored: 3, rate: 1 });
  });

  it('property: the periods partition the decisions, and the last toDate equals the whole', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.double({ min: 0, max: 1000, noNaN: true }), fc.boolean()), { minLength: 1, maxLength: 40 }), (xs) => {
        const rs = xs.map(([d, v, done]) => record(pair(), done ? v : null, day(d)));
        const s = summariseTrackRecord(rs);
        expect(s.periods.reduce((n, p) => n + p.decisions, 0)).toBe(rs.length);
        expect(s.periods.reduce((n, p) => n + p.realised, 0)).toBe(s.realised);
        expect(s.periods[s.periods.length - 1].toDate.hitRate).toEqual(s.market.hitRate);
      }),
    );
  });
});

import { holderPayout, payoutFraction } from './lmsr';

/**
 * How a participant's forecasts compare with what happened (the `seasons` guide states the same
 * definitions with a worked example, checked by test/unit/calibration.test.ts).
 *
 * Every buy or sell leaves its book at a probability p (LMSR p(higher)) and a consensus
 * c = rangeMin + p (rangeMax - rangeMin). When the book resolves at V, with v = clamp((V - rangeMin) /
 * (rangeMax - rangeMin), 0, 1) (the outcome's position in the range, what a higher share pays):
 *
 * - calibration = 1 - Brier, Brier = mean over the participant's trades of (p - v)^2; 1 is perfect,
 *   0 the worst possible. The reliability diagram bins trades by p into RELIABILITY_BINS equal bins
 *   and gives, per bin, the mean forecast p and the mean outcome v.
 * - accuracy = 1 - MAE, MAE = mean over the participant's trades of |c - clamp(V)| / (rangeMax - rangeMin),
 *   the consensus they left against the realised value, normalised by the range.
 * - redemptions (kind redeem) leave no probability of their own and are not scored.
 *
 * Each trade's terms are rounded once to the nearest 1e-9 (SCORE_UNIT) and summed as bigint, so the
 * aggregate a resolution adds is associative: summed book by book it equals the sum over all trades.
 */
export const RELIABILITY_BINS = 10;
export const SCORE_UNIT = 1_000_000_000;

export interface ScoredTrade {
  kind: 'buy' | 'sell' | 'redeem';
  probabilityAfter: number;
  consensusAfter: number;
}

export interface BookOutcome {
  value: number;
  rangeMin: number;
  rangeMax: number;
}

/** Additive sums (units of 1e-9): one book's contribution, or a participant's aggregate. */
export interface ScoreSums {
  /** Trades scored. */
  forecasts: number;
  /** Σ round((p - v)^2 · 1e9). */
  sqErr: bigint;
  /** Σ round(|c - clamp(V)| / range · 1e9). */
  absErr: bigint;
  /** Per bin: trades, Σ round(p · 1e9), Σ round(v · 1e9). */
  binCount: number[];
  binP: bigint[];
  binV: bigint[];
}

export function emptySums(): ScoreSums {
  return {
    forecasts: 0,
    sqErr: 0n,
    absErr: 0n,
    binCount: Array<number>(RELIABILITY_BINS).fill(0),
    binP: Array<bigint>(RELIABILITY_BINS).fill(0n),
    binV: Array<bigint>(RELIABILITY_BINS).fill(0n),
  };
}

const unit = (x: number): bigint => BigInt(Math.round(x * SCORE_UNIT));

/** The bin of a probability: [k/10, (k+1)/10), the last bin closed at 1. */
export function binOf(p: number): number {
  return Math.min(RELIABILITY_BINS - 1, Math.max(0, Math.floor(p * RELIABILITY_BINS)));
}

/** One trade's normalised absolute error: |c - clamp(V)| / (rangeMax - rangeMin), in [0, 1]. */
export function normalisedError(consensus: number, o: BookOutcome): number {
  const realised = Math.min(o.rangeMax, Math.max(o.rangeMin, o.value));
  const c = Math.min(o.rangeMax, Math.max(o.rangeMin, consensus));
  return Math.abs(c - realised) / (o.rangeMax - o.rangeMin);
}

/** What one resolved book adds to a participant's sums, from that participant's trades on it. */
export function bookScore(trades: readonly ScoredTrade[], o: BookOutcome): ScoreSums {
  const v = payoutFraction(o.value, o.rangeMin, o.rangeMax);
  const s = emptySums();
  for (const t of trades) {
    if (t.kind === 'redeem') continue;
    const p = Math.min(1, Math.max(0, t.probabilityAfter));
    const k = binOf(p);
    s.forecasts++;
    s.sqErr += unit((p - v) * (p - v));
    s.absErr += unit(normalisedError(t.consensusAfter, o));
    s.binCount[k]++;
    s.binP[k] += unit(p);
    s.binV[k] += unit(v);
  }
  return s;
}

export function addSums(a: ScoreSums, b: ScoreSums): ScoreSums {
  return {
    forecasts: a.forecasts + b.forecasts,
    sqErr: a.sqErr + b.sqErr,
    absErr: a.absErr + b.absErr,
    binCount: a.binCount.map((n, i) => n + b.binCount[i]),
    binP: a.binP.map((n, i) => n + b.binP[i]),
    binV: a.binV.map((n, i) => n + b.binV[i]),
  };
}

export interface ReliabilityBin {
  from: number;
  to: number;
  trades: number;
  /** Mean p of the trades in the bin, null when empty. */
  meanForecast: number | null;
  /** Mean outcome v of those trades, null when empty. */
  meanOutcome: number | null;
}

export interface Scores {
  /** 1 - Brier; null with nothing scored. */
  calibration: number | null;
  brier: number | null;
  /** 1 - MAE; null with nothing scored. */
  accuracy: number | null;
  meanAbsError: number | null;
  forecasts: number;
  reliability: ReliabilityBin[];
}

const round9 = (x: number) => Math.round(x * SCORE_UNIT) / SCORE_UNIT;
const mean = (sum: bigint, n: number) => round9(Number(sum) / SCORE_UNIT / n);

export function scoresOf(s: ScoreSums): Scores {
  const n = s.forecasts;
  const brier = n ? mean(s.sqErr, n) : null;
  const mae = n ? mean(s.absErr, n) : null;
  return {
    calibration: brier === null ? null : round9(1 - brier),
    brier,
    accuracy: mae === null ? null : round9(1 - mae),
    meanAbsError: mae,
    forecasts: n,
    reliability: s.binCount.map((c, k) => ({
      from: k / RELIABILITY_BINS,
      to: (k + 1) / RELIABILITY_BINS,
      trades: c,
      meanForecast: c ? mean(s.binP[k], c) : null,
      meanOutcome: c ? mean(s.binV[k], c) : null,
    })),
  };
}

/** A position on a book that is still open: marked at the book's consensus probability. */
export interface OpenPosition {
  sharesHigher: bigint;
  sharesLower: bigint;
  netCost: bigint;
  /** The book's current p(higher); null when the book has no liquidity (marked at zero worth). */
  probability: number | null;
}

/** Worth of an open position at the consensus mark: a higher share is worth p, a lower 1 - p, one floor (as a payout). */
export function markAtConsensus(p: OpenPosition): bigint {
  if (p.probability === null) return 0n;
  return holderPayout(p.sharesHigher, p.sharesLower, Math.min(1, Math.max(0, p.probability)));
}

export interface Earnings {
  settled: bigint;
  open: bigint;
  total: bigint;
}

/**
 * Earnings in nano: settled = Σ over resolved books (payout - net cost), carried by the aggregate;
 * open = Σ over open positions (mark at consensus - net cost); total = settled + open, exactly.
 */
export function earningsOf(settled: bigint, open: readonly OpenPosition[]): Earnings {
  const o = open.reduce((s, p) => s + markAtConsensus(p) - p.netCost, 0n);
  return { settled, open: o, total: settled + o };
}

/** Horizon lengths of the benchmark: how long a book traded before it resolved. */
export const HORIZONS = ['day', 'week', 'month', 'year', 'longer'] as const;
export type Horizon = (typeof HORIZONS)[number];
const DAY_MS = 86_400_000;
const HORIZON_LIMITS: Array<[Horizon, number]> = [
  ['day', DAY_MS],
  ['week', 7 * DAY_MS],
  ['month', 31 * DAY_MS],
  ['year', 366 * DAY_MS],
];

/** The horizon of a book open for `ms` milliseconds before it resolved: at most a day, a week, 31 days, 366 days, or longer. */
export function horizonOf(ms: number): Horizon {
  for (const [h, limit] of HORIZON_LIMITS) if (ms <= limit) return h;
  return 'longer';
}

/** A book's final-consensus error for the benchmark, in units of 1e-9 (as the accuracy terms). */
export function benchmarkError(consensus: number, o: BookOutcome): bigint {
  return unit(normalisedError(consensus, o));
}

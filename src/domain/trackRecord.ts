import { binOf, RELIABILITY_BINS } from './calibration';
import { payoutFraction, probabilityOf } from './lmsr';

/**
 * A workspace's track record (issue 68): for each decided proposal, metric and target date, what the
 * markets said under each branch when the decision was taken, what was decided, and what the metric
 * then did on the decided branch, against simple rules computed from the same data.
 *
 * Only the decided branch is ever realised: the other branch's book is voided at the decision, so its
 * consensus is a forecast nobody can check. Nothing here scores it.
 *
 * - Forecasts and the realised value are clamped into the book's range (the payout clamps the value),
 *   and errors are `realised - forecast`; figures over many metrics are mean |error| / range width.
 * - The market's forecast is the decided branch's consensus at the decision (its book takes no trade
 *   after it). Persistence forecasts the last reading before the decision; the average-change rule
 *   forecasts that reading plus the metric's mean change (realised - last reading) over the
 *   workspace's decisions realised before this one (no change when none was); "always approve"
 *   agrees with the approvals only, and the declines, where it would have taken the unrealised
 *   branch, are counted as unobservable, never scored.
 * - The direction held when the market's forecast and the realised value lie on the same side of the
 *   last reading (a forecast equal to the last reading predicts no direction and is not scored).
 * - The markets' advice is the branch with the higher consensus (a metric carries no "lower is
 *   better" setting, so higher reads as better); a decision for the other branch went against it.
 * - The traders' calibration is 1 - Brier over the decided books: p the decided branch's probability
 *   at the decision, v the realised value's position in the range.
 */
export type Branch = 'approved' | 'declined';
export type RecordStatus = 'pending' | 'realised' | 'voided';

/** When the records span fewer months than this, periods are runs of PERIOD_DECISIONS decisions. */
export const MIN_MONTHS = 3;
export const PERIOD_DECISIONS = 5;

/** What is known of one decided pair of books when the decision is taken. */
export interface DecidedPair {
  decision: Branch;
  rangeMin: number;
  rangeMax: number;
  approvedConsensus: number | null;
  declinedConsensus: number | null;
  lastReading: number | null;
  averageChange: number | null;
}

/** What a realised reading scores (signed errors in the metric's units, realised - forecast). */
export interface RealisedScore {
  marketError: number | null;
  persistenceError: number | null;
  averageChangeError: number | null;
  directionHeld: boolean | null;
  averageChangeDirectionHeld: boolean | null;
  forecastP: number | null;
  outcomeV: number;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

export function takenConsensus(p: Pick<DecidedPair, 'decision' | 'approvedConsensus' | 'declinedConsensus'>): number | null {
  return p.decision === 'approved' ? p.approvedConsensus : p.declinedConsensus;
}

/** The branch the markets favoured (the higher consensus), or null without both or on a tie. */
export function adviceOf(p: Pick<DecidedPair, 'approvedConsensus' | 'declinedConsensus'>): Branch | null {
  if (p.approvedConsensus === null || p.declinedConsensus === null || p.approvedConsensus === p.declinedConsensus) return null;
  return p.approvedConsensus > p.declinedConsensus ? 'approved' : 'declined';
}

/** The average-change rule's forecast: the last reading plus the mean change seen so far (none: no change). */
export function averageChangeForecast(p: Pick<DecidedPair, 'lastReading' | 'averageChange'>): number | null {
  return p.lastReading === null ? null : p.lastReading + (p.averageChange ?? 0);
}

function sameSide(forecast: number, realised: number, from: number): boolean | null {
  const predicted = Math.sign(forecast - from);
  if (predicted === 0) return null;
  return Math.sign(realised - from) === predicted;
}

/** Score one decided pair on the decided branch's realised value. */
export function scoreRealised(p: DecidedPair, value: number): RealisedScore {
  const { rangeMin: lo, rangeMax: hi } = p;
  const realised = clamp(value, lo, hi);
  const err = (f: number | null) => (f === null ? null : realised - clamp(f, lo, hi));
  const market = takenConsensus(p);
  const last = p.lastReading === null ? null : clamp(p.lastReading, lo, hi);
  const change = averageChangeForecast(p);
  return {
    marketError: err(market),
    persistenceError: err(p.lastReading),
    averageChangeError: err(change),
    directionHeld: market === null || last === null ? null : sameSide(clamp(market, lo, hi), realised, last),
    averageChangeDirectionHeld: change === null || last === null ? null : sameSide(clamp(change, lo, hi), realised, last),
    forecastP: market === null ? null : clamp(probabilityOf(market, lo, hi), 0, 1),
    outcomeV: payoutFraction(value, lo, hi),
  };
}

/** One record as the summaries read it (stored scores; status as of the reading instant). */
export interface ScoredRecord extends Partial<{ [K in keyof RealisedScore]: RealisedScore[K] | null }> {
  decidedAt: Date;
  decision: Branch;
  status: RecordStatus;
  advice: Branch | null;
  rangeWidth: number;
}

export interface Rate {
  hits: number;
  scored: number;
  rate: number | null;
}

/** A rule's forecast error beside the market's on the same decisions. */
export interface RuleFigures {
  rule: 'persistence' | 'averageChange' | 'alwaysApprove';
  /** Realised decisions where both the rule and the market made a forecast. */
  decisions: number;
  /** Mean |error| / range width of the rule, and of the market on the same decisions. */
  meanError: number | null;
  marketMeanError: number | null;
  /** The rule's mean error minus the market's: above 0, the market beat the rule by that much. */
  marketBetterBy: number | null;
  /** Of those decisions, how often the market's forecast was strictly closer. */
  marketCloser: number;
  /** Direction held (the rule's own forecast); null for persistence, which predicts no move. */
  hitRate: Rate | null;
  /** Realised decisions the rule cannot be scored on (always approve: the declines). */
  unobservable: number;
}

export interface Calibration {
  forecasts: number;
  /** 1 - Brier; null without forecasts. */
  score: number | null;
  bins: { bin: number; forecasts: number; meanForecast: number | null; meanOutcome: number | null }[];
}

export interface PeriodFigures {
  label: string;
  from: Date;
  to: Date;
  decisions: number;
  realised: number;
  hitRate: Rate;
  marketError: number | null;
  persistenceError: number | null;
  averageChangeError: number | null;
  calibration: number | null;
  /** Every decision up to this period's end. */
  toDate: { hitRate: Rate; marketError: number | null };
}

export interface TrackRecordSummary {
  decisions: number;
  realised: number;
  pending: number;
  voided: number;
  advice: { followed: AdviceFigures; against: AdviceFigures; none: number };
  market: { decisions: number; meanError: number | null; hitRate: Rate };
  rules: RuleFigures[];
  periodKind: 'month' | 'decisions';
  periods: PeriodFigures[];
  calibration: Calibration;
}

export interface AdviceFigures {
  decisions: number;
  realised: number;
  hitRate: Rate;
  meanError: number | null;
}

const rate = (hits: number, scored: number): Rate => ({ hits, scored, rate: scored ? hits / scored : null });
const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);
const rel = (e: number, w: number) => Math.abs(e) / w;

function hitsOf(rs: ScoredRecord[], pick: (r: ScoredRecord) => boolean | null | undefined): Rate {
  let hits = 0;
  let scored = 0;
  for (const r of rs) {
    const h = pick(r);
    if (h === null || h === undefined) continue;
    scored++;
    if (h) hits++;
  }
  return rate(hits, scored);
}

const realisedOf = (rs: ScoredRecord[]) => rs.filter((r) => r.status === 'realised');
const marketErrorOf = (rs: ScoredRecord[]) => mean(rs.flatMap((r) => (r.marketError === null || r.marketError === undefined ? [] : [rel(r.marketError, r.rangeWidth)])));

function ruleFigures(rule: RuleFigures['rule'], realised: ScoredRecord[]): RuleFigures {
  const errOf = (r: ScoredRecord): number | null | undefined =>
    rule === 'persistence' ? r.persistenceError : rule === 'averageChange' ? r.averageChangeError : r.decision === 'approved' ? r.marketError : null;
  const observable = rule === 'alwaysApprove' ? realised.filter((r) => r.decision === 'approved') : realised;
  const paired = observable.filter((r) => errOf(r) !== null && errOf(r) !== undefined && r.marketError !== null && r.marketError !== undefined);
  const ruleErr = mean(paired.map((r) => rel(errOf(r)!, r.rangeWidth)));
  const mktErr = mean(paired.map((r) => rel(r.marketError!, r.rangeWidth)));
  return {
    rule,
    decisions: paired.length,
    meanError: ruleErr,
    marketMeanError: mktErr,
    marketBetterBy: ruleErr === null || mktErr === null ? null : ruleErr - mktErr,
    marketCloser: paired.filter((r) => Math.abs(r.marketError!) < Math.abs(errOf(r)!)).length,
    hitRate: rule === 'persistence' ? null : hitsOf(observable, (r) => (rule === 'averageChange' ? r.averageChangeDirectionHeld : r.directionHeld)),
    unobservable: rule === 'alwaysApprove' ? realised.length - observable.length : 0,
  };
}

function calibrationOf(realised: ScoredRecord[]): Calibration {
  const bins = Array.from({ length: RELIABILITY_BINS }, () => ({ n: 0, p: 0, v: 0 }));
  let forecasts = 0;
  let sq = 0;
  for (const r of realised) {
    if (r.forecastP === null || r.forecastP === undefined || r.outcomeV === null || r.outcomeV === undefined) continue;
    const b = bins[binOf(r.forecastP)];
    b.n++;
    b.p += r.forecastP;
    b.v += r.outcomeV;
    forecasts++;
    sq += (r.forecastP - r.outcomeV) ** 2;
  }
  return {
    forecasts,
    score: forecasts ? 1 - sq / forecasts : null,
    bins: bins.map((b, bin) => ({ bin, forecasts: b.n, meanForecast: b.n ? b.p / b.n : null, meanOutcome: b.n ? b.v / b.n : null })),
  };
}

const monthOf = (d: Date) => d.toISOString().slice(0, 7);

/** Records grouped into periods: calendar months of the decision, or runs of PERIOD_DECISIONS decisions when they span few months. */
function periodsOf(rs: ScoredRecord[]): { kind: 'month' | 'decisions'; groups: { label: string; records: ScoredRecord[] }[] } {
  const sorted = [...rs].sort((a, b) => a.decidedAt.getTime() - b.decidedAt.getTime());
  const byMonth = new Map<string, ScoredRecord[]>();
  for (const r of sorted) {
    const m = monthOf(r.decidedAt);
    const list = byMonth.get(m);
    if (list) list.push(r);
    else byMonth.set(m, [r]);
  }
  if (byMonth.size >= MIN_MONTHS) return { kind: 'month', groups: [...byMonth].map(([label, records]) => ({ label, records })) };
  const groups: { label: string; records: ScoredRecord[] }[] = [];
  for (let i = 0; i < sorted.length; i += PERIOD_DECISIONS) {
    const records = sorted.slice(i, i + PERIOD_DECISIONS);
    groups.push({ label: `decisions ${i + 1}-${i + records.length}`, records });
  }
  return { kind: 'decisions', groups };
}

function adviceFigures(rs: ScoredRecord[]): AdviceFigures {
  const realised = realisedOf(rs);
  return { decisions: rs.length, realised: realised.length, hitRate: hitsOf(realised, (r) => r.directionHeld), meanError: marketErrorOf(realised) };
}

/** The whole summary of a set of records (already narrowed to what the reader may see, as of one instant). */
export function summariseTrackRecord(rs: ScoredRecord[]): TrackRecordSummary {
  const realised = realisedOf(rs);
  const { kind, groups } = periodsOf(rs);
  const doneToDate: ScoredRecord[] = [];
  const periods = groups.map(({ label, records }) => {
    const done = realisedOf(records);
    doneToDate.push(...done);
    const errOf = (pick: (r: ScoredRecord) => number | null | undefined) => mean(done.flatMap((r) => (pick(r) === null || pick(r) === undefined ? [] : [rel(pick(r)!, r.rangeWidth)])));
    return {
      label,
      from: records[0].decidedAt,
      to: records[records.length - 1].decidedAt,
      decisions: records.length,
      realised: done.length,
      hitRate: hitsOf(done, (r) => r.directionHeld),
      marketError: errOf((r) => r.marketError),
      persistenceError: errOf((r) => r.persistenceError),
      averageChangeError: errOf((r) => r.averageChangeError),
      calibration: calibrationOf(done).score,
      toDate: { hitRate: hitsOf(doneToDate, (r) => r.directionHeld), marketError: marketErrorOf(doneToDate) },
    };
  });
  const followed = rs.filter((r) => r.advice !== null && r.advice === r.decision);
  const against = rs.filter((r) => r.advice !== null && r.advice !== r.decision);
  return {
    decisions: rs.length,
    realised: realised.length,
    pending: rs.filter((r) => r.status === 'pending').length,
    voided: rs.filter((r) => r.status === 'voided').length,
    advice: { followed: adviceFigures(followed), against: adviceFigures(against), none: rs.length - followed.length - against.length },
    market: { decisions: realised.filter((r) => r.marketError !== null && r.marketError !== undefined).length, meanError: marketErrorOf(realised), hitRate: hitsOf(realised, (r) => r.directionHeld) },
    rules: (['persistence', 'averageChange', 'alwaysApprove'] as const).map((rule) => ruleFigures(rule, realised)),
    periodKind: kind,
    periods,
    calibration: calibrationOf(realised),
  };
}

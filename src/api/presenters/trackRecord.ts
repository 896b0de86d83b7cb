import { takenConsensus } from '../../domain/trackRecord';
import type { TrackRecord, TrackRecordEntry } from '../../services/trackRecord';

/** What the figures mean, answered with them (the page and the tool show the same sentences). */
export const TRACK_RECORD_DEFINITIONS = {
  unobservable:
    'Only the decided branch is ever realised: the other branch\'s book is voided at the decision, so its consensus is a forecast nobody can check, and it is never scored.',
  forecast: "The market's forecast is the decided branch's consensus at the decision; errors are realised minus forecast, both clamped into the book's range, and figures over many decisions are mean |error| as a fraction of the range.",
  direction: 'The direction held when the forecast and the realised value lie on the same side of the last reading before the decision; a forecast equal to that reading predicts no direction and is not scored.',
  persistence: 'Persistence forecasts the last reading before the decision.',
  averageChange: "The average-change rule forecasts that reading plus the metric's mean change (realised minus last reading) over this workspace's decisions realised before; with none, no change.",
  alwaysApprove: 'Always approve agrees with the approvals only, where its record is the market\'s; on the declines it would have taken the unrealised branch, so they are counted as unobservable.',
  advice: "The markets' advice is the branch with the higher consensus (no metric says lower is better); a decision for the other branch went against it.",
  calibration: "The traders' calibration is 1 - Brier over the realised decisions: p the decided branch's probability at the decision, v the realised value's position in the range.",
  periods: 'Periods are calendar months of the decision, or runs of 5 decisions while the record spans fewer than 3 months; toDate covers every decision up to the period\'s end.',
};

const iso = (d: Date) => d.toISOString();

export function presentTrackRecordEntry(e: TrackRecordEntry) {
  const forecast = takenConsensus(e);
  const other = e.decision === 'approved' ? 'declined' : 'approved';
  return {
    proposalId: e.proposalId,
    proposalTitle: e.proposalTitle,
    metricId: e.metricId,
    metricName: e.metricName,
    unit: e.unit,
    targetDate: e.targetDate,
    marketId: e.decidedMarketId,
    decision: e.decision,
    decidedAt: iso(e.decidedAt),
    approvedConsensus: e.approvedConsensus,
    declinedConsensus: e.declinedConsensus,
    advice: e.advice,
    followedAdvice: e.advice === null ? null : e.advice === e.decision,
    forecast,
    unchosen: { branch: other, consensus: other === 'approved' ? e.approvedConsensus : e.declinedConsensus, realised: null },
    lastReading: e.lastReading,
    averageChange: e.averageChange,
    status: e.status,
    realisedValue: e.realisedValue,
    settledAt: e.settledAt ? iso(e.settledAt) : null,
    error: e.marketError,
    relativeError: e.marketError === null ? null : Math.abs(e.marketError) / (e.rangeMax - e.rangeMin),
    persistenceError: e.persistenceError,
    averageChangeError: e.averageChangeError,
    directionHeld: e.directionHeld,
  };
}

export function presentTrackRecord(r: TrackRecord) {
  const s = r.summary;
  return {
    workspaceId: r.workspaceId,
    metric: r.metric,
    asOf: iso(r.asOf),
    definitions: TRACK_RECORD_DEFINITIONS,
    summary: { decisions: s.decisions, realised: s.realised, pending: s.pending, voided: s.voided, market: s.market, rules: s.rules, advice: s.advice },
    periodKind: s.periodKind,
    periods: s.periods.map((p) => ({ ...p, from: iso(p.from), to: iso(p.to) })),
    calibration: s.calibration,
    entries: r.entries.map(presentTrackRecordEntry),
    total: r.total,
    nextCursor: r.nextCursor,
  };
}

const CSV_COLUMNS = [
  'decidedAt', 'proposalId', 'proposalTitle', 'metricId', 'metricName', 'unit', 'targetDate', 'decision', 'approvedConsensus', 'declinedConsensus', 'advice',
  'followedAdvice', 'forecast', 'lastReading', 'averageChange', 'status', 'realisedValue', 'settledAt', 'error', 'relativeError', 'persistenceError',
  'averageChangeError', 'directionHeld', 'marketId',
] as const;

/** RFC 4180: every field quoted when it holds a comma, a quote or a line break; a leading =, +, - or @ is quoted text, never a formula. */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The record's entries as CSV (a header row, CRLF line ends), one row per decided metric and date. */
export function presentTrackRecordCsv(entries: TrackRecordEntry[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const e of entries.map(presentTrackRecordEntry)) lines.push(CSV_COLUMNS.map((c) => csvField(e[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

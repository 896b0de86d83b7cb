import { toCredits } from '../../domain/money';
import type { MetricRow, UpdateRow } from '../../services/metrics';
import type { ReadingRow } from '../../services/metrics';
import type { settleMetric } from '../../services/metrics';

/** Catalog shape plus the condensed names (currentValue, targetValue, unit) of spec §2.2. */
export function presentMetric(r: MetricRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    value: r.value,
    total: r.total,
    currentValue: r.total,
    targetValue: null,
    unit: r.unit,
    formula: r.formula,
    formulaError: r.formulaError,
    depth: r.depth,
    order: r.sortOrder,
    isLeaf: r.isLeaf,
    marketRangeMax: r.marketRangeMax,
    resetsEvery: r.resetsEvery,
    opensAt: r.opensAt,
    resolvesNaUntilMeasured: r.resolvesNaUntilMeasured,
    measuredAt: r.lastMeasuredAt?.toISOString() ?? null,
    firstMeasuredAt: r.measuredAt?.toISOString() ?? null,
    timePreference: r.timePreference,
    liquidityCredits: r.liquidityCredits === null ? null : toCredits(r.liquidityCredits),
    marketTitle: r.marketTitle,
    settlementLagMinutes: r.settlementLagMinutes,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** The status summary row: catalog {id, name, description, value, total} plus depth and order. */
export function presentStatusMetric(r: MetricRow) {
  const { id, name, description, value, total, currentValue, depth, order, formulaError, measuredAt } = presentMetric(r);
  return { id, name, description, value, total, currentValue, depth, order, formulaError, measuredAt };
}

export function presentReading(r: ReadingRow) {
  return { id: r.id, at: r.at.toISOString(), asOf: r.asOf.toISOString(), value: r.value, na: r.na, kind: r.kind, note: r.note };
}

export function presentUpdate(u: UpdateRow) {
  return {
    id: u.id,
    metricId: u.metricId,
    metricName: u.metricName,
    oldValue: u.oldValue,
    newValue: u.newValue,
    na: u.na,
    asOf: u.asOf.toISOString(),
    note: u.note,
    updatedBy: u.agentId,
    createdAt: u.at.toISOString(),
  };
}

/** An early settlement (POST /metrics/{id}/settle). */
export function presentSettlement(r: Awaited<ReturnType<typeof settleMetric>>) {
  return { metricId: r.metricId, settled: r.settled, count: r.count, totalPayout: toCredits(r.totalPayout), pending: r.pending };
}

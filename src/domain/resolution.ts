/** How a due book ends (pure): the rules of spec §3.2 for a book whose period has passed. */

const DAY_MS = 86_400_000;

export interface MetricFacts {
  resolvesNaUntilMeasured: boolean;
  settlementLagMinutes: number | null;
  measuredAt: Date | null;
}
export interface Reading {
  value: number | null;
  na: boolean;
}

/**
 * What a due book needs (pure): resolve on the last reading dated inside its period; void on an
 * N/A reading, while the metric is unmeasured (resolvesNaUntilMeasured), or once the settlement
 * lag (never under a day) passes with no reading; skip a negative value; otherwise keep trading.
 */
export function decideResolution(
  mk: { periodEnd: Date | null },
  metric: MetricFacts | undefined,
  reading: Reading | undefined,
  now: Date,
): { action: 'resolve'; value: number } | { action: 'void'; reason: string; code: string } | { action: 'skip' | 'wait' } {
  if (reading) {
    if (reading.na || reading.value === null) return { action: 'void', code: 'na_reading', reason: 'N/A: the reading for this period says the number does not exist' };
    if (reading.value < 0) return { action: 'skip' };
    return { action: 'resolve', value: reading.value };
  }
  const end = mk.periodEnd!;
  if (metric?.resolvesNaUntilMeasured && (!metric.measuredAt || metric.measuredAt > end)) {
    return { action: 'void', code: 'unmeasured', reason: 'N/A: the metric had no logged reading at or before the resolution instant' };
  }
  const lagMs = Math.max((metric?.settlementLagMinutes ?? 0) * 60_000, DAY_MS);
  if (now.getTime() >= end.getTime() + lagMs) {
    return { action: 'void', code: 'settlement_lag', reason: 'no reading dated inside the period arrived before the settlement deadline' };
  }
  return { action: 'wait' };
}


import type { EntityManager } from 'typeorm';
import type { Deps } from '../deps';
import { inTransaction } from '../db/tx';
import { desiredHorizons } from '../domain/horizons';
import { logger } from '../logger';
import { lockMarket, MARKET_SELECT, rowToMarket, type MarketRow } from './markets';
import { resolveLockedMarket, voidLockedMarket } from './settlement';
import { loadSpawnMetric, spawnBooksForMetric } from './spawning';

const DAY_MS = 86_400_000;

export interface RefreshSummary {
  metrics: number;
  opened: number;
  deactivated: number;
  voided: number;
}

/**
 * Retire a metric's baseline books whose date is no longer desired and has not ended: untraded
 * ones are voided (pool back to the funder), traded ones close to buys and resolve at their date.
 * Books of rolling entries still listed are never stale: they rolled, and await their reading.
 */
async function retireStale(m: EntityManager, metricId: string, now: Date): Promise<{ deactivated: number; voided: number }> {
  const metric = await loadSpawnMetric(m, metricId);
  if (!metric) return { deactivated: 0, voided: 0 };
  const desired = desiredHorizons(now, metric.timePreference);
  const wantedDates = new Set(desired.map((d) => d.period.targetDate));
  const entries = new Set(metric.timePreference?.enabled ? (metric.timePreference.customHorizons ?? []) : []);
  const live: MarketRow[] = (
    await m.query(
      `${MARKET_SELECT} WHERE mk.metric_id = $1 AND mk.proposal_id IS NULL AND mk.status IN ('open','closed') AND mk.close_reason IS NULL
         AND (mk.period_end IS NULL OR mk.period_end > $2) ORDER BY mk.id FOR UPDATE OF mk`,
      [metricId, now],
    )
  ).map(rowToMarket);
  let deactivated = 0;
  let voided = 0;
  for (const mk of live) {
    if (wantedDates.has(mk.targetDate) || (mk.horizonEntry && entries.has(mk.horizonEntry))) continue;
    if (mk.tradeCount === 0) {
      await voidLockedMarket(m, mk, 'horizon no longer desired', now);
      voided++;
    } else {
      await m.query(`UPDATE markets SET close_reason = 'deactivated', updated_at = $2 WHERE id = $1`, [mk.id, now]);
      deactivated++;
    }
  }
  return { deactivated, voided };
}

/** One metric's horizon pass in one transaction: retire stale dates, open missing ones. */
export async function refreshMetric(m: EntityManager, metricId: string, now: Date): Promise<{ opened: number; deactivated: number; voided: number }> {
  const retired = await retireStale(m, metricId, now);
  const opened = await spawnBooksForMetric(m, metricId, now);
  return { opened: opened.length, ...retired };
}

export async function refreshHorizons(deps: Deps, scope: { workspaceId?: string; metricId?: string; minuteOnly?: boolean }): Promise<RefreshSummary> {
  const now = deps.clock.now();
  const rows: Array<{ id: string }> = await deps.ds.query(
    `SELECT id FROM metrics
      WHERE ($1::uuid IS NULL OR workspace_id = $1::uuid) AND ($2::uuid IS NULL OR id = $2::uuid)
        AND time_preference IS NOT NULL AND (time_preference->>'enabled')::boolean
        AND (NOT $3::boolean OR time_preference::text ~ '\\+[0-9]+min')
      ORDER BY id`,
    [scope.workspaceId ?? null, scope.metricId ?? null, scope.minuteOnly ?? false],
  );
  const summary: RefreshSummary = { metrics: rows.length, opened: 0, deactivated: 0, voided: 0 };
  const CONCURRENCY = 4;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < rows.length) {
        const id = rows[next++].id;
        const r = await inTransaction(deps.ds, (m) => refreshMetric(m, id, now));
        summary.opened += r.opened;
        summary.deactivated += r.deactivated;
        summary.voided += r.voided;
      }
    }),
  );
  return summary;
}

export type ResolveOutcome = { marketId: string; outcome: 'resolved' | 'voided' | 'waiting' | 'skipped' | 'untouched'; value?: number; reason?: string; payout?: bigint };

/**
 * A due book (its period has ended): resolve on the last reading dated inside the period; void
 * on an N/A reading, when the metric is still unmeasured (resolvesNaUntilMeasured), or when the
 * settlement lag (never under a day) passes with no reading; otherwise keep trading.
 */
export async function resolveIfDue(m: EntityManager, marketId: string, now: Date): Promise<ResolveOutcome> {
  const mk = await lockMarket(m, marketId);
  if (!mk || (mk.status !== 'open' && mk.status !== 'closed') || !mk.periodEnd || !mk.periodStart || mk.periodEnd > now) {
    return { marketId, outcome: 'untouched' };
  }
  const [metric] = await m.query(`SELECT resolves_na_until_measured, settlement_lag_minutes, measured_at FROM metrics WHERE id = $1`, [mk.metricId]);
  const readings = await m.query(
    `SELECT value, na FROM metric_readings WHERE metric_id = $1 AND as_of >= $2 AND as_of < $3 ORDER BY as_of DESC, id DESC LIMIT 1`,
    [mk.metricId, mk.periodStart, mk.periodEnd],
  );
  if (readings.length) {
    const r = readings[0];
    if (r.na || r.value === null) {
      await voidLockedMarket(m, mk, 'N/A: the reading for this period says the number does not exist', now);
      return { marketId, outcome: 'voided', reason: 'na_reading' };
    }
    if (r.value < 0) {
      logger.error({ marketId, value: r.value }, 'negative reading: resolution skipped');
      return { marketId, outcome: 'skipped', reason: 'negative_value', value: r.value };
    }
    const { totalPayout } = await resolveLockedMarket(m, mk, r.value, now);
    return { marketId, outcome: 'resolved', value: r.value, payout: totalPayout };
  }
  if (metric?.resolves_na_until_measured && (!metric.measured_at || metric.measured_at > mk.periodEnd)) {
    await voidLockedMarket(m, mk, 'N/A: the metric had no logged reading at or before the resolution instant', now);
    return { marketId, outcome: 'voided', reason: 'unmeasured' };
  }
  const lagMs = Math.max((metric?.settlement_lag_minutes ?? 0) * 60_000, DAY_MS);
  if (now.getTime() >= mk.periodEnd.getTime() + lagMs) {
    await voidLockedMarket(m, mk, 'no reading dated inside the period arrived before the settlement deadline', now);
    return { marketId, outcome: 'voided', reason: 'settlement_lag' };
  }
  return { marketId, outcome: 'waiting' };
}

/** Early settlement of one book at a supplied value (clamped to its range). */
export async function settleBook(m: EntityManager, marketId: string, value: number, reason: string, now: Date): Promise<{ marketId: string; settled: boolean; payout: bigint }> {
  const mk = await lockMarket(m, marketId);
  if (!mk || (mk.status !== 'open' && mk.status !== 'closed')) return { marketId, settled: false, payout: 0n };
  const clamped = Math.min(Math.max(value, mk.rangeMin), mk.rangeMax);
  const { totalPayout } = await resolveLockedMarket(m, mk, clamped, now, { settledEarly: true, reason });
  return { marketId, settled: true, payout: totalPayout };
}

export async function dueMarketIds(deps: Deps, workspaceId: string | null, now: Date): Promise<string[]> {
  const rows = await deps.ds.query(
    `SELECT id FROM markets WHERE status IN ('open','closed') AND period_end <= $1 AND ($2::uuid IS NULL OR workspace_id = $2::uuid) ORDER BY period_end, id`,
    [now, workspaceId],
  );
  return rows.map((r: { id: string }) => r.id);
}

export async function liveMarketIdsOfMetric(m: EntityManager, metricId: string): Promise<string[]> {
  const rows = await m.query(`SELECT id FROM markets WHERE metric_id = $1 AND status IN ('open','closed') ORDER BY id`, [metricId]);
  return rows.map((r: { id: string }) => r.id);
}

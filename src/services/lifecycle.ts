import type { EntityManager } from 'typeorm';
import type { Deps } from '../deps';
import { inTransaction } from '../db/tx';
import { logger } from '../logger';
import { lockMarket } from './markets';
import { resolveLockedMarket, voidLockedMarket } from './settlement';
import { liveBaselineBooks, loadSpawnMetrics, planHorizons, spawnForMetrics } from './spawning';

const DAY_MS = 86_400_000;

export interface RefreshSummary {
  metrics: number;
  opened: number;
  deactivated: number;
  voided: number;
}

/** One metric's horizon pass in the caller's transaction: retire stale dates, open missing ones. */
export async function refreshMetric(m: EntityManager, metricId: string, now: Date): Promise<{ opened: number; deactivated: number; voided: number }> {
  const r = await spawnForMetrics(m, [metricId], now);
  return { opened: r.opened.length, deactivated: r.deactivated, voided: r.voided };
}

const CHUNK = 250;

/**
 * The horizon pass: plan every metric in memory from two queries per chunk, then open or retire
 * only where something changes, one transaction per chunk that has work.
 */
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
  const chunks: string[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) chunks.push(rows.slice(i, i + CHUNK).map((r) => r.id));
  let next = 0;
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < chunks.length) {
        const ids = chunks[next++];
        const metrics = await loadSpawnMetrics(deps.ds.manager, ids);
        const live = await liveBaselineBooks(deps.ds.manager, ids);
        const busy = metrics.filter((mt) => {
          const plan = planHorizons(mt, live.filter((b) => b.metricId === mt.id), now);
          return plan.open.length > 0 || plan.stale.length > 0;
        });
        if (!busy.length) continue;
        // Re-planned inside the transaction: a concurrent pass may have opened some already.
        const r = await inTransaction(deps.ds, (m) => spawnForMetrics(m, busy.map((mt) => mt.id), now));
        summary.opened += r.opened.length;
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

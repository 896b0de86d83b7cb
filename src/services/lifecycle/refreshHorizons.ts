import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { callback } from '../wiring';
import { liveBaselineBooks, loadSpawnMetrics, planHorizons, spawnForMetrics } from './spawnBooks';
import { rows } from '../../db/queryRows';

export interface RefreshSummary {
  metrics: number;
  opened: number;
  deactivated: number;
  voided: number;
  /** Conditional books opened for pending proposals. */
  proposalBranches: number;
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
        AND workspace_id NOT IN (SELECT id FROM workspaces WHERE deleting_at IS NOT NULL)
      ORDER BY id`,
    [scope.workspaceId ?? null, scope.metricId ?? null, scope.minuteOnly ?? false],
  );
  const summary: RefreshSummary = { metrics: rows.length, opened: 0, deactivated: 0, voided: 0, proposalBranches: 0 };
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
  // Pending proposals follow their metrics' dates: missing branch pairs open, paid again by their contributors.
  if (!scope.minuteOnly) {
    const pending: Array<{ id: string }> = await deps.ds.query(
      `SELECT id FROM proposals WHERE status = 'pending' AND ($1::uuid IS NULL OR workspace_id = $1::uuid) AND (deadline IS NULL OR deadline > $2) ORDER BY id`,
      [scope.workspaceId ?? null, now],
    );
    for (const p of pending) {
      const r = await inTransaction(deps.ds, (m) => callback('proposalDatesChanged')(m, p.id, now));
      summary.proposalBranches += r.opened.length;
    }
  }
  return summary;
}

export async function dueMarketIds(deps: Deps, workspaceId: string | null, now: Date): Promise<string[]> {
  const due = await rows<{ id: string }>(
    deps.ds,
    `SELECT id FROM markets WHERE status IN ('open','closed') AND period_end <= $1 AND ($2::uuid IS NULL OR workspace_id = $2::uuid) ORDER BY period_end, id`,
    [now, workspaceId],
  );
  return due.map((r) => r.id);
}

export async function liveMarketIdsOfMetric(m: EntityManager, metricId: string): Promise<string[]> {
  return (await rows<{ id: string }>(m, `SELECT id FROM markets WHERE metric_id = $1 AND status IN ('open','closed') ORDER BY id`, [metricId])).map((r) => r.id);
}

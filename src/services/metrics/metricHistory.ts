/** A metric's history: backfill, purge, and the workspace's update log. */
import type { EntityManager } from 'typeorm';
import type { Clock, Deps } from '../../deps';
import { refuseBackfillAfterResolution } from '../lifecycle';
import { backfillReadings, purgeReadings } from './readings';
import { requireMetric } from './metricRows';
import { rowReader, type Row } from '../../db/rows';
import { MetricUpdate } from '../../entities/metric';

// ---------------------------------------------------------------------------
// Readings and history (writers run through writeWorkspaceMetrics, metricLock.ts)

export async function backfillMetric(m: EntityManager, workspaceId: string, idOrName: string, readings: Array<{ at: string; value: number }>, clock: Clock) {
  const row = await requireMetric(m, workspaceId, idOrName);
  await refuseBackfillAfterResolution(m, row.id);
  return backfillReadings(m, row, readings, clock);
}

export async function purgeMetricLogs(m: EntityManager, workspaceId: string, metricIdOrName: string | null) {
  const row = metricIdOrName === null ? null : await requireMetric(m, workspaceId, metricIdOrName);
  const deleted = await purgeReadings(m, workspaceId, row?.id ?? null);
  return row ? { deleted, scope: 'metric' as const, metricId: row.id } : { deleted, scope: 'workspace' as const };
}

/** A value change of a metric (the entity's columns). */
export type UpdateRow = Row<MetricUpdate>;
const readUpdate = rowReader(MetricUpdate);

/** Value-change history of the workspace's metrics, newest first. */
export async function metricUpdates(deps: Deps, workspaceId: string, limit: number): Promise<UpdateRow[]> {
  const rows: Record<string, unknown>[] = await deps.ds.query(`SELECT * FROM metric_updates WHERE workspace_id = $1 ORDER BY id DESC LIMIT $2`, [workspaceId, limit]);
  return rows.map(readUpdate);
}

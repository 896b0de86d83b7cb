/** A workspace's metric rows: mapping, lookups, and its dependency graph loaded from them. */
import type { DataSource, EntityManager } from 'typeorm';
import { rowReader, type Row } from '../../db/rows';
import type { Deps } from '../../deps';
import type { TimePreference } from '../../domain/horizons';
import { Metric } from '../../entities/metric';
import { DomainError } from '../../errors';
import { MetricGraph } from '../../domain/metricGraph';
import { firstRow, rows } from '../../db/queryRows';

export { fileReading } from './readings';

export type Db = EntityManager | DataSource;

export const MAX_SETTLEMENT_LAG_MINUTES = 90 * 24 * 60;
export const DEFAULT_TIME_PREFERENCE: TimePreference = { enabled: true, halfLife: 1 };

/** A metric as stored: its entity's columns (db/rows), not a hand-written re-statement of the table. */
export type MetricRow = Row<Metric>;

export const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export const rowToMetric = rowReader(Metric);

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A metric of the workspace by id, else by name (case-insensitive); null when neither matches. */
export async function getMetricRow(m: Db, workspaceId: string, idOrName: string): Promise<MetricRow | null> {
  const row = await firstRow<Record<string, unknown>>(
    m,
    `SELECT * FROM metrics WHERE workspace_id = $1 AND (id = $2::uuid OR lower(name) = lower($3))
      ORDER BY (id = $2::uuid) DESC NULLS LAST LIMIT 1`,
    [workspaceId, UUID_RE.test(idOrName) ? idOrName : null, idOrName],
  );
  return row ? rowToMetric(row) : null;
}

export async function requireMetric(m: Db, workspaceId: string, idOrName: string): Promise<MetricRow> {
  const row = await getMetricRow(m, workspaceId, idOrName);
  if (!row) throw new DomainError('not_found', `No metric "${idOrName}" exists in this workspace.`);
  return row;
}

/** The metrics of a workspace with computed totals and depth, by depth then order (spec §4.4). */
export async function metricsOfWorkspace(deps: Deps, workspaceId: string): Promise<MetricRow[]> {
  return (await rows<Record<string, unknown>>(deps.ds, `SELECT * FROM metrics WHERE workspace_id = $1 ORDER BY depth, sort_order, created_at, id`, [workspaceId])).map(rowToMetric);
}


// ---------------------------------------------------------------------------
// The dependency graph of one workspace (pure: src/domain/metricGraph.ts)

export async function loadGraph(m: EntityManager, workspaceId: string): Promise<MetricGraph> {
  const rows: Array<Record<string, unknown>> = await m.query(`SELECT * FROM metrics WHERE workspace_id = $1`, [workspaceId]);
  return new MetricGraph(rows.map(rowToMetric));
}

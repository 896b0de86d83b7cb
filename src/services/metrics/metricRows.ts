/** A workspace's metric rows: mapping, lookups, and its dependency graph loaded from them. */
import type { DataSource, EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import type { TimePreference } from '../../domain/horizons';
import { DomainError } from '../../errors';
import { MetricGraph } from '../../domain/metricGraph';
import { type ResetPeriod } from './readings';

export { fileReading } from './readings';

export type Db = EntityManager | DataSource;

export const MAX_SETTLEMENT_LAG_MINUTES = 90 * 24 * 60;
export const DEFAULT_TIME_PREFERENCE: TimePreference = { enabled: true, halfLife: 1 };

export interface MetricRow {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  /** The manually set base value. */
  value: number;
  formula: string;
  /** value + formula result; null when that is not a finite number (formulaError says why). */
  total: number | null;
  formulaError: string | null;
  /** Layers of dependents: 0 for a root or a standalone leaf. */
  depth: number;
  sortOrder: number;
  /** The formula references no metric. */
  isLeaf: boolean;
  marketRangeMax: number;
  resetsEvery: ResetPeriod | null;
  opensAt: number | null;
  resolvesNaUntilMeasured: boolean;
  timePreference: TimePreference | null;
  /** Nano-units; null = the workspace default. */
  liquidityCredits: bigint | null;
  marketTitle: string | null;
  settlementLagMinutes: number | null;
  /** Instant of the earliest numeric reading ever logged; purges keep it (resolvesNaUntilMeasured ends for good). */
  measuredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function rowToMetric(r: Record<string, unknown>): MetricRow {
  return {
    id: r.id as string,
    workspaceId: r.workspace_id as string,
    name: r.name as string,
    description: r.description as string,
    value: Number(r.value),
    formula: r.formula as string,
    total: num(r.total),
    formulaError: (r.formula_error as string | null) ?? null,
    depth: Number(r.depth),
    sortOrder: Number(r.sort_order),
    isLeaf: r.is_leaf as boolean,
    marketRangeMax: Number(r.market_range_max),
    resetsEvery: (r.resets_every as ResetPeriod | null) ?? null,
    opensAt: num(r.opens_at),
    resolvesNaUntilMeasured: r.resolves_na_until_measured as boolean,
    timePreference: (r.time_preference as TimePreference | null) ?? null,
    liquidityCredits: r.liquidity_credits === null || r.liquidity_credits === undefined ? null : BigInt(r.liquidity_credits as string),
    marketTitle: (r.market_title as string | null) ?? null,
    settlementLagMinutes: num(r.settlement_lag_minutes),
    measuredAt: (r.measured_at as Date | null) ?? null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A metric of the workspace by id, else by name (case-insensitive); null when neither matches. */
export async function getMetricRow(m: Db, workspaceId: string, idOrName: string): Promise<MetricRow | null> {
  const rows = await m.query(
    `SELECT * FROM metrics WHERE workspace_id = $1 AND (id = $2::uuid OR lower(name) = lower($3))
      ORDER BY (id = $2::uuid) DESC NULLS LAST LIMIT 1`,
    [workspaceId, UUID_RE.test(idOrName) ? idOrName : null, idOrName],
  );
  return rows.length ? rowToMetric(rows[0]) : null;
}

export async function requireMetric(m: Db, workspaceId: string, idOrName: string): Promise<MetricRow> {
  const row = await getMetricRow(m, workspaceId, idOrName);
  if (!row) throw new DomainError('not_found', `No metric "${idOrName}" exists in this workspace.`);
  return row;
}

/** The metrics of a workspace with computed totals and depth, by depth then order (spec §4.4). */
export async function metricsOfWorkspace(deps: Deps, workspaceId: string): Promise<MetricRow[]> {
  const rows = await deps.ds.query(`SELECT * FROM metrics WHERE workspace_id = $1 ORDER BY depth, sort_order, created_at, id`, [workspaceId]);
  return rows.map(rowToMetric);
}


// ---------------------------------------------------------------------------
// The dependency graph of one workspace (pure: src/domain/metricGraph.ts)

export async function loadGraph(m: EntityManager, workspaceId: string): Promise<MetricGraph> {
  const rows: Array<Record<string, unknown>> = await m.query(`SELECT * FROM metrics WHERE workspace_id = $1`, [workspaceId]);
  return new MetricGraph(rows.map(rowToMetric));
}

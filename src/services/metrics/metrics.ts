import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { pgCode } from '../../db/tx';
import type { Clock } from '../../deps';
import { dependencyOrder, dependents, depths, renameReference } from '../../domain/formula';
import type { TimePreference } from '../../domain/horizons';
import { toNano } from '../../domain/money';
import { DomainError, badRequest, conflict } from '../../errors';
import { MetricGraph, parseCached, type GraphNode } from '../../domain/metricGraph';
import { openBaselineBooksByMetric, openBooksForNewMetric, refuseBackfillAfterResolution, refuseIfTraded, respawnBooksAfterChange, retireBooksOfDeletedMetric, type MarketRow } from '../markets';
import { writeEvents } from '../events';
import { backfillReadings, insertReadings, purgeReadings, trendsFor, type NewReading, type ResetPeriod } from './readings';

export { fileReading } from './readings';

type Db = EntityManager | DataSource;

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

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function rowToMetric(r: Record<string, unknown>): MetricRow {
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

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A metric of the workspace by id, else by name (case-insensitive); null when neither matches. */
export async function getMetricRow(m: Db, workspaceId: string, idOrName: string): Promise<MetricRow | null> {
  const rows = await m.query(
    `SELECT * FROM metrics WHERE workspace_id = $1 AND (id = $2::uuid OR lower(name) = lower($3))
      ORDER BY (id = $2::uuid) DESC NULLS LAST LIMIT 1`,
    [workspaceId, UUID_RE.test(idOrName) ? idOrName : null, idOrName],
  );
  return rows.length ? rowToMetric(rows[0]) : null;
}

async function requireMetric(m: Db, workspaceId: string, idOrName: string): Promise<MetricRow> {
  const row = await getMetricRow(m, workspaceId, idOrName);
  if (!row) throw new DomainError('not_found', `No metric "${idOrName}" exists in this workspace.`);
  return row;
}

/** Sorted by depth then order (spec §4.4). */
export async function listMetrics(m: Db, workspaceId: string): Promise<MetricRow[]> {
  const rows = await m.query(`SELECT * FROM metrics WHERE workspace_id = $1 ORDER BY depth, sort_order, created_at, id`, [workspaceId]);
  return rows.map(rowToMetric);
}


/** Metric writes of one workspace run one at a time, so recalculation never reads a stale total. */
async function lockWorkspaceMetrics(m: EntityManager, workspaceId: string): Promise<void> {
  await m.query(`SELECT pg_advisory_xact_lock(7101, hashtext($1))`, [workspaceId]);
}

// ---------------------------------------------------------------------------
// The dependency graph of one workspace (pure: src/domain/metricGraph.ts)

async function loadGraph(m: EntityManager, workspaceId: string): Promise<MetricGraph> {
  const rows: Array<Record<string, unknown>> = await m.query(`SELECT * FROM metrics WHERE workspace_id = $1`, [workspaceId]);
  return new MetricGraph(rows.map(rowToMetric));
}

interface TotalChange {
  id: string;
  name: string;
  oldTotal: number | null;
  newTotal: number | null;
}

/**
 * Recompute `start` and everything that depends on them, in dependency order, and persist the
 * totals that moved (one statement however wide the fan-out).
 */
async function recalculate(m: EntityManager, g: MetricGraph, start: string[]): Promise<TotalChange[]> {
  const affected = new Set(start);
  const forward = g.forward();
  for (const id of start) for (const d of dependents(forward, id)) affected.add(d);
  const order = affected.size === 1 ? [...affected] : dependencyOrder(forward.filter((n) => affected.has(n.id)));
  const changes: TotalChange[] = [];
  const dirty: GraphNode[] = [];
  for (const id of order) {
    const n = g.nodes.get(id)!;
    const { total, error } = g.evaluateNode(n);
    if (total !== n.total) changes.push({ id, name: n.name, oldTotal: n.total, newTotal: total });
    if (total !== n.total || error !== n.formulaError) dirty.push(n);
    n.total = total;
    n.formulaError = error;
  }
  if (dirty.length) {
    await m.query(
      `UPDATE metrics SET total = x.total, formula_error = x.err, updated_at = now()
         FROM unnest($1::uuid[], $2::float8[], $3::text[]) AS x(id, total, err) WHERE metrics.id = x.id`,
      [dirty.map((n) => n.id), dirty.map((n) => n.total), dirty.map((n) => n.formulaError)],
    );
  }
  return changes;
}

/** Refresh depth and leaf typing of every metric whose structure moved; returns how many changed. */
async function refreshStructure(m: EntityManager, g: MetricGraph): Promise<number> {
  const d = depths(g.reversed());
  const moved = [...g.nodes.values()].filter((n) => d.get(n.id) !== n.depth || (n.deps.length === 0) !== n.isLeaf);
  if (!moved.length) return 0;
  for (const n of moved) {
    n.depth = d.get(n.id) ?? 0;
    n.isLeaf = n.deps.length === 0;
  }
  await m.query(
    `UPDATE metrics SET depth = x.depth, is_leaf = x.leaf FROM unnest($1::uuid[], $2::int[], $3::bool[]) AS x(id, depth, leaf) WHERE metrics.id = x.id`,
    [moved.map((n) => n.id), moved.map((n) => n.depth), moved.map((n) => n.isLeaf)],
  );
  return moved.length;
}

/** metric:updated per moved total, in one statement (a fan-out of a thousand dependants is one round trip). */
async function emitTotalChanges(m: EntityManager, workspaceId: string, changes: TotalChange[]): Promise<void> {
  await writeEvents(
    m,
    changes.map((c) => ({ workspaceId, type: 'metric:updated', data: { metricId: c.id, metricName: c.name, oldValue: c.oldTotal, newValue: c.newTotal } })),
  );
}

/** Readings for every dependant whose total moved to a number, dated like the change that moved it. */
function dependantReadings(changes: TotalChange[], skip: string, asOf: Date | undefined, cause: string): NewReading[] {
  return changes
    .filter((c) => c.id !== skip && c.newTotal !== null)
    .map((c) => ({ metricId: c.id, value: c.newTotal, asOf, kind: 'update', note: `Recalculated after {${cause}} changed.` }));
}

// ---------------------------------------------------------------------------
// Create, update, delete

export interface MetricSettings {
  description?: string;
  value?: number;
  formula?: string;
  marketRangeMax?: number;
  resetsEvery?: ResetPeriod | null;
  opensAt?: number | null;
  resolvesNaUntilMeasured?: boolean;
  timePreference?: TimePreference | null;
}

export interface CreateMetricInput extends MetricSettings {
  name: string;
}

export interface UpdateMetricInput extends Omit<MetricSettings, 'value'> {
  name?: string;
  /** A number sets the base value; null files an N/A reading and keeps the base value. */
  value?: number | null;
  na?: boolean;
  asOf?: Date;
  liquidityCredits?: number | null;
  marketTitle?: string | null;
  settlementLagMinutes?: number | null;
  oldValue?: number;
  updateNote?: string;
}

export interface Actor {
  agentId: string | null;
  clock: Clock;
}

function checkOpensAt(opensAt: number | null, isLeaf: boolean, rangeMax: number): void {
  if (opensAt === null) return;
  if (!isLeaf) throw badRequest('opensAt applies to leaf metrics only (a formula that references no metric); send opensAt: null with this formula.');
  if (opensAt < 0 || opensAt > rangeMax) throw badRequest(`opensAt ${opensAt} must lie inside the market range 0..${rangeMax}.`);
}

function nameTaken(g: MetricGraph, name: string, selfId: string | null): void {
  const other = g.idByName(name);
  if (other !== undefined && other !== selfId) throw conflict(`A metric named "${g.nodes.get(other)!.name}" already exists in this workspace (names compare case-insensitively).`);
}

function uniqueViolation(err: unknown, name: string): unknown {
  return pgCode(err) === '23505' ? conflict(`A metric named "${name}" already exists in this workspace (names compare case-insensitively).`) : err;
}

export async function createMetric(m: EntityManager, workspaceId: string, input: CreateMetricInput, actor: Actor): Promise<MetricRow> {
  await lockWorkspaceMetrics(m, workspaceId);
  const g = await loadGraph(m, workspaceId);
  const name = input.name.trim();
  nameTaken(g, name, null);
  const id = randomUUID();
  const f = g.compile(input.formula ?? '0', { id, name });
  const node: GraphNode = { id, name, value: input.value ?? 0, formula: f.text, expr: f.expr, deps: f.deps, total: null, formulaError: null, depth: 0, isLeaf: f.deps.length === 0 };
  g.add(node);
  g.assertAcyclic();
  const rangeMax = input.marketRangeMax ?? 1000;
  const opensAt = input.opensAt ?? null;
  checkOpensAt(opensAt, node.isLeaf, rangeMax);
  const { total, error } = g.evaluateNode(node);
  Object.assign(node, { total, formulaError: error });
  const tp = input.timePreference === undefined ? DEFAULT_TIME_PREFERENCE : input.timePreference;
  try {
    await m.query(
      `INSERT INTO metrics (id, workspace_id, name, description, value, formula, total, formula_error, depth, sort_order, is_leaf,
                            market_range_max, resets_every, opens_at, resolves_na_until_measured, time_preference)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, (SELECT coalesce(max(sort_order), 0) + 1 FROM metrics WHERE workspace_id = $2), $9, $10, $11, $12, $13, $14)`,
      [id, workspaceId, name, input.description ?? '', node.value, f.text, total, error, node.isLeaf, rangeMax, input.resetsEvery ?? null, opensAt,
        input.resolvesNaUntilMeasured ?? false, tp === null ? null : JSON.stringify(tp)],
    );
  } catch (err) {
    throw uniqueViolation(err, name);
  }
  await refreshStructure(m, g);
  // Only a metric that counts as measured from the start gets a first reading.
  if (total !== null && !input.resolvesNaUntilMeasured) {
    await insertReadings(m, workspaceId, [{ metricId: id, value: total, kind: 'create' }], actor.clock.now());
  }
  await openBooksForNewMetric(m, id, actor.clock.now());
  return (await getMetricRow(m, workspaceId, id))!;
}

// jsonb reorders object keys, so settings compare by a key-sorted rendering.
function canonicalJson(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}
const sameSetting = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

export async function updateMetric(m: EntityManager, workspaceId: string, idOrName: string, input: UpdateMetricInput, actor: Actor): Promise<MetricRow> {
  const reading = input.na === true || input.value !== undefined;
  if (input.na === true && typeof input.value === 'number') throw badRequest('Send either na: true or a value, not both: N/A means the number does not exist for that moment.');
  if (!reading && input.asOf) throw badRequest('asOf dates a reading: send value (or na: true) with it.');
  if (!reading && (input.oldValue !== undefined || input.updateNote !== undefined)) {
    throw badRequest('oldValue and updateNote describe a value change: send value (or na: true) with them.');
  }
  const now = actor.clock.now();
  if (input.asOf && input.asOf > now) throw badRequest(`asOf ${input.asOf.toISOString()} is in the future; a reading describes a moment that has happened.`);

  await lockWorkspaceMetrics(m, workspaceId);
  const row = await requireMetric(m, workspaceId, idOrName);
  const g = await loadGraph(m, workspaceId);
  const node = g.nodes.get(row.id)!;
  const changed: string[] = [];

  const name = input.name?.trim() ?? row.name;
  if (name !== row.name) {
    nameTaken(g, name, row.id);
    changed.push('name');
  }
  const description = input.description ?? row.description;
  if (description !== row.description) changed.push('description');

  let formulaChanged = false;
  if (input.formula !== undefined) {
    const f = g.compile(input.formula, { id: row.id, name });
    if (f.text !== row.formula) {
      await refuseIfTraded(m, row.id, 'Its formula cannot change while a live market on it has trades.');
      formulaChanged = true;
      Object.assign(node, { formula: f.text, expr: f.expr, deps: f.deps });
      g.assertAcyclic();
      changed.push('formula');
    }
  }
  const na = input.na === true || input.value === null;
  const newValue = typeof input.value === 'number' ? input.value : row.value;
  if (newValue !== row.value) changed.push('value');
  node.value = newValue;

  const next = {
    marketRangeMax: input.marketRangeMax ?? row.marketRangeMax,
    resetsEvery: input.resetsEvery === undefined ? row.resetsEvery : input.resetsEvery,
    opensAt: input.opensAt === undefined ? row.opensAt : input.opensAt,
    resolvesNaUntilMeasured: input.resolvesNaUntilMeasured ?? row.resolvesNaUntilMeasured,
    timePreference: input.timePreference === undefined ? row.timePreference : input.timePreference,
    liquidityCredits: input.liquidityCredits === undefined ? row.liquidityCredits : input.liquidityCredits === null ? null : toNano(input.liquidityCredits),
    marketTitle: input.marketTitle === undefined ? row.marketTitle : input.marketTitle?.trim() || null,
    settlementLagMinutes: input.settlementLagMinutes === undefined ? row.settlementLagMinutes : input.settlementLagMinutes,
  };
  checkOpensAt(next.opensAt, node.deps.length === 0, next.marketRangeMax);
  for (const key of Object.keys(next) as Array<keyof typeof next>) if (!sameSetting(next[key], row[key])) changed.push(key);

  if (changed.length) {
    await m.query(
      `UPDATE metrics SET name = $2, description = $3, value = $4, formula = $5, market_range_max = $6, resets_every = $7, opens_at = $8,
              resolves_na_until_measured = $9, time_preference = $10, liquidity_credits = $11, market_title = $12, settlement_lag_minutes = $13,
              is_leaf = $14, updated_at = now()
        WHERE id = $1`,
      [row.id, name, description, newValue, node.formula, next.marketRangeMax, next.resetsEvery, next.opensAt, next.resolvesNaUntilMeasured,
        next.timePreference === null ? null : JSON.stringify(next.timePreference), next.liquidityCredits?.toString() ?? null, next.marketTitle,
        next.settlementLagMinutes, node.deps.length === 0],
    ).catch((err) => {
      throw uniqueViolation(err, name);
    });
  }

  if (name !== row.name) await renameEverywhere(m, g, row, name, actor);
  if (description !== row.description) await writeRevision(m, row, 'description', row.description, description, actor);
  if (formulaChanged) await refreshStructure(m, g);

  const totals = formulaChanged || newValue !== row.value ? await recalculate(m, g, [row.id]) : [];
  const asOf = input.asOf;
  const readings: NewReading[] = [];
  if (reading && (na || node.total !== null)) {
    readings.push({ metricId: row.id, value: na ? null : node.total, na, asOf, kind: 'update', note: input.updateNote ?? null });
  } else if (totals.some((c) => c.id === row.id && c.newTotal !== null)) {
    readings.push({ metricId: row.id, value: node.total, asOf, kind: 'update', note: 'Formula changed.' });
  }
  readings.push(...dependantReadings(totals, row.id, asOf, name));
  await insertReadings(m, workspaceId, readings, now);
  if (reading) {
    await m.query(
      `INSERT INTO metric_updates (workspace_id, metric_id, metric_name, old_value, new_value, na, as_of, note, agent_id, at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [workspaceId, row.id, name, input.oldValue ?? row.value, na ? null : newValue, na, asOf ?? now, input.updateNote ?? null, actor.agentId, now],
    );
    changed.push('reading');
  }
  await emitTotalChanges(m, workspaceId, totals);
  if (changed.length) await respawnBooksAfterChange(m, row.id, changed, now);
  return (await getMetricRow(m, workspaceId, row.id))!;
}

/** A rename rewrites every formula that names the metric, and is logged like a description change. */
async function renameEverywhere(m: EntityManager, g: MetricGraph, row: MetricRow, to: string, actor: Actor): Promise<void> {
  const users = g.usersOf(row.id);
  g.rename(row.id, to);
  if (users.length) {
    for (const u of users) {
      u.formula = renameReference(u.formula, row.name, to);
      u.expr = parseCached(u.formula);
    }
    await m.query(`UPDATE metrics SET formula = x.formula, updated_at = now() FROM unnest($1::uuid[], $2::text[]) AS x(id, formula) WHERE metrics.id = x.id`, [
      users.map((u) => u.id),
      users.map((u) => u.formula),
    ]);
  }
  await writeRevision(m, row, 'name', row.name, to, actor);
}

async function writeRevision(m: EntityManager, row: MetricRow, field: 'name' | 'description', from: string, to: string, actor: Actor): Promise<void> {
  await m.query(`INSERT INTO metric_revisions (workspace_id, metric_id, field, old_value, new_value, agent_id, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    row.workspaceId,
    row.id,
    field,
    from,
    to,
    actor.agentId,
    actor.clock.now(),
  ]);
}

export async function deleteMetric(m: EntityManager, workspaceId: string, idOrName: string, now: Date): Promise<void> {
  await lockWorkspaceMetrics(m, workspaceId);
  const row = await requireMetric(m, workspaceId, idOrName);
  const g = await loadGraph(m, workspaceId);
  const users = g.usersOf(row.id);
  if (users.length) {
    const names = users.map((u) => `"${u.name}"`).join(', ');
    throw conflict(`"${row.name}" is referenced by the formula of ${names}; change ${users.length > 1 ? 'those formulas' : 'that formula'} first.`, {
      referencedBy: users.map((u) => ({ id: u.id, name: u.name })),
    });
  }
  await retireBooksOfDeletedMetric(m, row.id, now);
  await m.query(`DELETE FROM metrics WHERE id = $1`, [row.id]);
  g.remove(row.id);
  await refreshStructure(m, g);
}

/** Order is 1-based by index; ids outside the workspace (or not ids at all) are ignored. */
export async function reorderMetrics(m: EntityManager, workspaceId: string, ids: string[]): Promise<number> {
  const unique = [...new Set(ids.filter((id) => UUID_RE.test(id)).map((id) => id.toLowerCase()))];
  const positions = unique.map((id) => ids.findIndex((x) => x.toLowerCase() === id) + 1);
  if (!unique.length) return 0;
  await lockWorkspaceMetrics(m, workspaceId);
  const [, updated]: [unknown, number] = await m.query(
    `UPDATE metrics SET sort_order = x.pos, updated_at = now() FROM unnest($2::uuid[], $3::int[]) AS x(id, pos)
      WHERE metrics.id = x.id AND metrics.workspace_id = $1`,
    [workspaceId, unique, positions],
  );
  return updated;
}

/** Idempotent repair: leaf typing and depths recomputed from the formulas as stored. */
export async function migrateLeafTypes(m: EntityManager, workspaceId: string): Promise<number> {
  await lockWorkspaceMetrics(m, workspaceId);
  const g = await loadGraph(m, workspaceId);
  return refreshStructure(m, g);
}

// ---------------------------------------------------------------------------
// Readings and history

export async function backfillMetric(m: EntityManager, workspaceId: string, idOrName: string, readings: Array<{ at: string; value: number }>, clock: Clock) {
  await lockWorkspaceMetrics(m, workspaceId);
  const row = await requireMetric(m, workspaceId, idOrName);
  await refuseBackfillAfterResolution(m, row.id);
  return backfillReadings(m, row, readings, clock);
}

export async function purgeMetricLogs(m: EntityManager, workspaceId: string, metricIdOrName: string | null) {
  await lockWorkspaceMetrics(m, workspaceId);
  const row = metricIdOrName === null ? null : await requireMetric(m, workspaceId, metricIdOrName);
  const deleted = await purgeReadings(m, workspaceId, row?.id ?? null);
  return row ? { deleted, scope: 'metric' as const, metricId: row.id } : { deleted, scope: 'workspace' as const };
}

export interface UpdateRow {
  id: string;
  metricId: string;
  metricName: string;
  oldValue: number | null;
  newValue: number | null;
  na: boolean;
  asOf: Date;
  note: string | null;
  agentId: string | null;
  at: Date;
}

export async function listUpdates(m: Db, workspaceId: string, limit: number): Promise<UpdateRow[]> {
  const rows: Record<string, unknown>[] = await m.query(`SELECT * FROM metric_updates WHERE workspace_id = $1 ORDER BY id DESC LIMIT $2`, [workspaceId, limit]);
  return rows.map((r) => ({
    id: String(r.id),
    metricId: r.metric_id as string,
    metricName: r.metric_name as string,
    oldValue: num(r.old_value),
    newValue: num(r.new_value),
    na: r.na as boolean,
    asOf: r.as_of as Date,
    note: (r.note as string | null) ?? null,
    agentId: (r.agent_id as string | null) ?? null,
    at: r.at as Date,
  }));
}

export interface StatusMetric {
  metric: MetricRow;
  trend?: Array<[number, number]>;
  markets?: MarketRow[];
}

/** GET /status: every metric, with trends and open baseline books when asked. */
export async function statusSummary(
  ds: DataSource,
  workspaceId: string,
  opts: { trends: boolean; trendsLimit: number; markets: boolean; now: Date },
): Promise<StatusMetric[]> {
  const metrics = await listMetrics(ds, workspaceId);
  const trends = opts.trends ? await trendsFor(ds, workspaceId, opts.trendsLimit, opts.now) : null;
  const markets = opts.markets ? await openBaselineBooksByMetric(ds.manager, workspaceId, metrics.map((x) => x.id)) : null;
  return metrics.map((metric) => ({
    metric,
    ...(trends ? { trend: trends.get(metric.id) ?? [] } : {}),
    ...(opts.markets ? { markets: markets?.get(metric.id) ?? [] } : {}),
  }));
}

/**
 * Creating, updating, renaming, deleting and reordering metrics, each in the caller's transaction,
 * which must hold the workspace's metric lock: run them through writeWorkspaceMetrics (metricLock.ts).
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { pgCode } from '../../db/tx';
import type { Clock } from '../../deps';
import { renameReference } from '../../domain/formula';
import type { TimePreference } from '../../domain/horizons';
import { toNano } from '../../domain/money';
import { badRequest, conflict } from '../../errors';
import { MetricGraph, parseCached, type GraphNode } from '../../domain/metricGraph';
import { openBooksForNewMetric, refuseIfTraded, respawnBooksAfterChange, retireBooksOfDeletedMetric } from '../lifecycle';
import type { BookCost, UnfundedBook } from '../books';
import { accountId, balanceOf } from '../ledger';
import { insertReadings, type NewReading, type ResetPeriod } from './readings';
import { DEFAULT_TIME_PREFERENCE, getMetricRow, loadGraph, requireMetric, UUID_RE, type MetricRow } from './metricRows';
import { dependantReadings, emitTotalChanges, recalculate, refreshStructure } from './recalculateTotals';
import { rows } from '../../db/queryRows';

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
  /** What the numbers count ("k€", "users"); blank or null: none. */
  unit?: string | null;
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

export function checkOpensAt(opensAt: number | null, isLeaf: boolean, rangeMax: number): void {
  if (opensAt === null) return;
  if (!isLeaf) throw badRequest('opensAt applies to leaf metrics only (a formula that references no metric); send opensAt: null with this formula.');
  if (opensAt < 0 || opensAt > rangeMax) throw badRequest(`opensAt ${opensAt} must lie inside the market range 0..${rangeMax}.`);
}

export function nameTaken(g: MetricGraph, name: string, selfId: string | null): void {
  const other = g.idByName(name);
  if (other !== undefined && other !== selfId) throw conflict(`A metric named "${g.nodes.get(other)!.name}" already exists in this workspace (names compare case-insensitively).`);
}

export function uniqueViolation(err: unknown, name: string): unknown {
  return pgCode(err) === '23505' ? conflict(`A metric named "${name}" already exists in this workspace (names compare case-insensitively).`) : err;
}

/** A new metric, what opening its books cost the workspace owner, and which stayed unfunded and why. */
export interface CreatedMetric {
  metric: MetricRow;
  books: BookCost[];
  /** Credits moved from the owner into the new books' pools (nano). */
  spent: bigint;
  /** What every book's planned subsidy adds up to (nano): spent, plus what the unfunded books need. */
  planned: bigint;
  unfunded: UnfundedBook[];
  ownerId: string;
  /** The owner's balance before the books opened (nano). */
  balanceBefore: bigint;
}

export async function createMetric(m: EntityManager, workspaceId: string, input: CreateMetricInput, actor: Actor): Promise<CreatedMetric> {
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
                            market_range_max, resets_every, opens_at, resolves_na_until_measured, time_preference, unit)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, (SELECT coalesce(max(sort_order), 0) + 1 FROM metrics WHERE workspace_id = $2), $9, $10, $11, $12, $13, $14, $15)`,
      [id, workspaceId, name, input.description ?? '', node.value, f.text, total, error, node.isLeaf, rangeMax, input.resetsEvery ?? null, opensAt,
        input.resolvesNaUntilMeasured ?? false, tp === null ? null : JSON.stringify(tp), input.unit?.trim() || null],
    );
  } catch (err) {
    throw uniqueViolation(err, name);
  }
  await refreshStructure(m, g);
  // Only a metric that counts as measured from the start gets a first reading.
  if (total !== null && !input.resolvesNaUntilMeasured) {
    await insertReadings(m, workspaceId, [{ metricId: id, value: total, kind: 'create' }], actor.clock.now());
  }
  const [{ owner_id: ownerId }] = await rows<{ owner_id: string }>(m, `SELECT owner_id FROM workspaces WHERE id = $1`, [workspaceId]);
  const balanceBefore = (await balanceOf(m, accountId.agent(ownerId))) ?? 0n;
  const opening = await openBooksForNewMetric(m, id, actor.clock.now());
  const planned = opening.books.reduce((sum, b) => sum + b.planned, 0n);
  return { metric: (await getMetricRow(m, workspaceId, id))!, ...opening, planned, ownerId, balanceBefore };
}

// jsonb reorders object keys, so settings compare by a key-sorted rendering.
export function canonicalJson(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}
export const sameSetting = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

export async function updateMetric(m: EntityManager, workspaceId: string, idOrName: string, input: UpdateMetricInput, actor: Actor): Promise<MetricRow> {
  const reading = input.na === true || input.value !== undefined;
  if (input.na === true && typeof input.value === 'number') throw badRequest('Send either na: true or a value, not both: N/A means the number does not exist for that moment.');
  if (!reading && input.asOf) throw badRequest('asOf dates a reading: send value (or na: true) with it.');
  if (!reading && (input.oldValue !== undefined || input.updateNote !== undefined)) {
    throw badRequest('oldValue and updateNote describe a value change: send value (or na: true) with them.');
  }
  const now = actor.clock.now();
  if (input.asOf && input.asOf > now) throw badRequest(`asOf ${input.asOf.toISOString()} is in the future; a reading describes a moment that has happened.`);

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
    unit: input.unit === undefined ? row.unit : input.unit?.trim() || null,
  };
  checkOpensAt(next.opensAt, node.deps.length === 0, next.marketRangeMax);
  for (const key of Object.keys(next) as Array<keyof typeof next>) if (!sameSetting(next[key], row[key])) changed.push(key);

  if (changed.length) {
    try {
      await m.query(
        `UPDATE metrics SET name = $2, description = $3, value = $4, formula = $5, market_range_max = $6, resets_every = $7, opens_at = $8,
                resolves_na_until_measured = $9, time_preference = $10, liquidity_credits = $11, market_title = $12, settlement_lag_minutes = $13,
                is_leaf = $14, unit = $15, updated_at = now()
          WHERE id = $1`,
        [row.id, name, description, newValue, node.formula, next.marketRangeMax, next.resetsEvery, next.opensAt, next.resolvesNaUntilMeasured,
          next.timePreference === null ? null : JSON.stringify(next.timePreference), next.liquidityCredits?.toString() ?? null, next.marketTitle,
          next.settlementLagMinutes, node.deps.length === 0, next.unit],
      );
    } catch (err) {
      throw uniqueViolation(err, name);
    }
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
export async function renameEverywhere(m: EntityManager, g: MetricGraph, row: MetricRow, to: string, actor: Actor): Promise<void> {
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

export async function writeRevision(m: EntityManager, row: MetricRow, field: 'name' | 'description', from: string, to: string, actor: Actor): Promise<void> {
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
  const [, updated]: [unknown, number] = await m.query(
    `UPDATE metrics SET sort_order = x.pos, updated_at = now() FROM unnest($2::uuid[], $3::int[]) AS x(id, pos)
      WHERE metrics.id = x.id AND metrics.workspace_id = $1`,
    [workspaceId, unique, positions],
  );
  return updated;
}

/** Idempotent repair: leaf typing and depths recomputed from the formulas as stored. */
export async function migrateLeafTypes(m: EntityManager, workspaceId: string): Promise<number> {
  const g = await loadGraph(m, workspaceId);
  return refreshStructure(m, g);
}

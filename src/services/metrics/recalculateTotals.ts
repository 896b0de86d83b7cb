/** Recalculation: totals in dependency order after a change, depths and leaf flags, and the events and readings they cause. */
import type { EntityManager } from 'typeorm';
import { dependencyOrder, dependents, depths } from '../../domain/formula';
import { MetricGraph, type GraphNode } from '../../domain/metricGraph';
import { writeEvents } from '../events';
import { type NewReading } from './readings';

export interface TotalChange {
  id: string;
  name: string;
  oldTotal: number | null;
  newTotal: number | null;
}

/**
 * Recompute `start` and everything that depends on them, in dependency order, and persist the
 * totals that moved (one statement however wide the fan-out).
 */
export async function recalculate(m: EntityManager, g: MetricGraph, start: string[]): Promise<TotalChange[]> {
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
export async function refreshStructure(m: EntityManager, g: MetricGraph): Promise<number> {
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
export async function emitTotalChanges(m: EntityManager, workspaceId: string, changes: TotalChange[]): Promise<void> {
  await writeEvents(
    m,
    changes.map((c) => ({ workspaceId, type: 'metric:updated', data: { metricId: c.id, metricName: c.name, oldValue: c.oldTotal, newValue: c.newTotal } })),
  );
}

/** Readings for every dependant whose total moved to a number, dated like the change that moved it. */
export function dependantReadings(changes: TotalChange[], skip: string, asOf: Date | undefined, cause: string): NewReading[] {
  return changes
    .filter((c) => c.id !== skip && c.newTotal !== null)
    .map((c) => ({ metricId: c.id, value: c.newTotal, asOf, kind: 'update', note: `Recalculated after {${cause}} changed.` }));
}

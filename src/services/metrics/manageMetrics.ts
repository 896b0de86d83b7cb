import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { onceByKey } from '../idempotency';
import { createMetric, deleteMetric, migrateLeafTypes, reorderMetrics, updateMetric } from './editMetrics';
import { backfillMetric, purgeMetricLogs } from './metricHistory';
import { writeWorkspaceMetrics } from './metricLock';

/*
 * The metric-editing use cases of a workspace, each in its own transaction (retried on
 * serialization failures) queued behind the workspace's metric lock (metricLock.ts); `agentId` is
 * who acts (null for the master key), recorded on revisions.
 */

/**
 * Create a metric. A dry run does all of it (the same validation, the same books, the same ledger
 * refusals) in a transaction that is then rolled back, and answers what it would have cost.
 * Its books are paid for, so it takes an Idempotency-Key: a retry with the key answers the first
 * outcome (the key commits with the metric; a refusal does not consume it).
 */
export async function addMetric(
  deps: Deps,
  workspaceId: string,
  input: Parameters<typeof createMetric>[2],
  agentId: string | null,
  opts: { dryRun?: boolean; idempotencyKey?: string } = {},
): ReturnType<typeof createMetric> {
  const create = (m: EntityManager) => createMetric(m, workspaceId, input, { agentId, clock: deps.clock });
  const key = opts.dryRun ? undefined : opts.idempotencyKey;
  const run = async (m: EntityManager) =>
    (await onceByKey(m, { participantId: agentId ?? 'master', scope: workspaceId, key, request: ['POST /metrics', input] }, () => create(m))).value;
  return writeWorkspaceMetrics(deps.ds, workspaceId, run, opts);
}

export async function editMetric(deps: Deps, workspaceId: string, idOrName: string, input: Parameters<typeof updateMetric>[3], agentId: string | null): ReturnType<typeof updateMetric> {
  return writeWorkspaceMetrics(deps.ds, workspaceId, (m) => updateMetric(m, workspaceId, idOrName, input, { agentId, clock: deps.clock }));
}

export async function removeMetric(deps: Deps, workspaceId: string, idOrName: string): Promise<void> {
  await writeWorkspaceMetrics(deps.ds, workspaceId, (m) => deleteMetric(m, workspaceId, idOrName, deps.clock.now()));
}

/** Order is 1-based by index; ids outside the workspace are ignored. Returns how many moved. */
export async function reorderWorkspaceMetrics(deps: Deps, workspaceId: string, ids: string[]): ReturnType<typeof reorderMetrics> {
  return writeWorkspaceMetrics(deps.ds, workspaceId, (m) => reorderMetrics(m, workspaceId, ids));
}

/** Idempotent repair of leaf versus computed typing (and depths) from the stored formulas. */
export async function repairLeafTypes(deps: Deps, workspaceId: string): ReturnType<typeof migrateLeafTypes> {
  return writeWorkspaceMetrics(deps.ds, workspaceId, (m) => migrateLeafTypes(m, workspaceId));
}

/** Delete the readings of one metric (id or name), or of every metric of the workspace (null). */
export async function purgeReadingLogs(deps: Deps, workspaceId: string, metric: string | null): ReturnType<typeof purgeMetricLogs> {
  return writeWorkspaceMetrics(deps.ds, workspaceId, (m) => purgeMetricLogs(m, workspaceId, metric));
}

/** Older readings written under a metric's history; the current value does not move. */
export async function backfillMetricHistory(deps: Deps, workspaceId: string, idOrName: string, readings: Parameters<typeof backfillMetric>[3]): ReturnType<typeof backfillMetric> {
  return writeWorkspaceMetrics(deps.ds, workspaceId, (m) => backfillMetric(m, workspaceId, idOrName, readings, deps.clock));
}

import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps';
import { dueMarketIds, type RefreshSummary } from './horizonPass';

type LaneJob = { resolve: { marketIds: string[] }; settle: { marketId: string; value: number; reason: string } };

/**
 * Run a book-changing job on the book's trade lane (so it serializes with the book's trades) and
 * wait for its result; null when it did not finish in time (the job still runs).
 */
export async function runOnLane<J extends keyof LaneJob>(deps: Deps, job: J, data: LaneJob[J], laneKey: string, jobId: string): Promise<Record<string, unknown> | null> {
  const queueName = deps.hub.queueFor('trade', laneKey);
  const events = deps.hub.queueEvents(queueName);
  await events.waitUntilReady();
  const added = await deps.hub.enqueue('trade', job, data as never, { jobId, laneKey, attempts: 3, backoff: { type: 'exponential', delay: 100 } });
  try {
    return (await added.waitUntilFinished(events, deps.config.TRADE_WAIT_MS * 3)) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export interface ResolveSummary {
  checked: number;
  resolved: string[];
  voided: string[];
  waiting: string[];
  skipped: string[];
  pending: string[];
}

const RESOLVE_BATCH = 100;

/** Every due book of a workspace (or of all workspaces), checked on its own lane in per-lane batches. */
export async function resolveDueNow(deps: Deps, workspaceId: string | null): Promise<ResolveSummary> {
  const now = deps.clock.now();
  const ids = await dueMarketIds(deps, workspaceId, now);
  const out: ResolveSummary = { checked: ids.length, resolved: [], voided: [], waiting: [], skipped: [], pending: [] };
  const byLane = new Map<string, string[]>();
  for (const id of ids) {
    const lane = deps.hub.queueFor('trade', id);
    byLane.set(lane, [...(byLane.get(lane) ?? []), id]);
  }
  const batches: string[][] = [];
  for (const laneIds of byLane.values()) for (let i = 0; i < laneIds.length; i += RESOLVE_BATCH) batches.push(laneIds.slice(i, i + RESOLVE_BATCH));
  const results = await Promise.all(
    batches.map((b) => runOnLane(deps, 'resolve', { marketIds: b }, b[0], `resolve-${randomUUID()}`)),
  );
  results.forEach((r, i) => {
    if (!r) {
      out.pending.push(...batches[i]);
      return;
    }
    for (const o of r.outcomes as Array<{ marketId: string; outcome: string }>) {
      const list = o.outcome === 'resolved' ? out.resolved : o.outcome === 'voided' ? out.voided : o.outcome === 'waiting' ? out.waiting : o.outcome === 'skipped' ? out.skipped : null;
      list?.push(o.marketId);
    }
  });
  return out;
}

/** Enqueue a horizon pass and wait for it (the API's refresh endpoint). */
export async function refreshNow(deps: Deps, scope: { workspaceId?: string; metricId?: string }): Promise<RefreshSummary | null> {
  const events = deps.hub.queueEvents('horizons');
  await events.waitUntilReady();
  // A fresh id per call: a reused id would hand back an earlier pass's result. The pass is idempotent.
  const job = await deps.hub.enqueue('horizons', 'refresh', scope, { jobId: `refresh-${randomUUID()}` });
  try {
    return (await job.waitUntilFinished(events, 60_000)) as RefreshSummary;
  } catch {
    return null;
  }
}


import type { Deps } from '../deps';
import { dueMarketIds, refreshHorizons, type RefreshSummary } from './lifecycle';

type LaneJob = { resolve: { marketId: string }; settle: { marketId: string; value: number; reason: string } };

/**
 * Run a book-changing job on the book's trade lane (so it serializes with the book's trades) and
 * wait for its result; null when it did not finish in time (the job still runs).
 */
export async function runOnLane<J extends keyof LaneJob>(deps: Deps, job: J, data: LaneJob[J], jobId: string): Promise<Record<string, unknown> | null> {
  const queueName = deps.hub.queueFor('trade', data.marketId);
  const events = deps.hub.queueEvents(queueName);
  await events.waitUntilReady();
  const added = await deps.hub.enqueue('trade', job, data as never, { jobId, laneKey: data.marketId, attempts: 3, backoff: { type: 'exponential', delay: 100 } });
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

/** Every due book of a workspace (or of all workspaces), each checked on its own lane. */
export async function resolveDueNow(deps: Deps, workspaceId: string | null): Promise<ResolveSummary> {
  const now = deps.clock.now();
  const ids = await dueMarketIds(deps, workspaceId, now);
  const out: ResolveSummary = { checked: ids.length, resolved: [], voided: [], waiting: [], skipped: [], pending: [] };
  const results = await Promise.all(ids.map((id) => runOnLane(deps, 'resolve', { marketId: id }, `resolve-${id}-${now.getTime()}`)));
  results.forEach((r, i) => {
    const outcome = (r?.outcome as string | undefined) ?? 'pending';
    const list = outcome === 'resolved' ? out.resolved : outcome === 'voided' ? out.voided : outcome === 'waiting' ? out.waiting : outcome === 'skipped' ? out.skipped : outcome === 'untouched' ? null : out.pending;
    list?.push(ids[i]);
  });
  return out;
}

/** Enqueue a horizon pass and wait for it (the API's refresh endpoint). */
export async function refreshNow(deps: Deps, scope: { workspaceId?: string; metricId?: string }): Promise<RefreshSummary | null> {
  const events = deps.hub.queueEvents('horizons');
  await events.waitUntilReady();
  const job = await deps.hub.enqueue('horizons', 'refresh', scope, { jobId: `refresh-${scope.workspaceId ?? 'all'}-${scope.metricId ?? 'all'}-${deps.clock.now().getTime()}` });
  try {
    return (await job.waitUntilFinished(events, 60_000)) as RefreshSummary;
  } catch {
    return null;
  }
}

export { refreshHorizons };

import { randomUUID } from 'node:crypto';
import type { JobPayload, JobResult } from '../../../jobs/definitions';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { dueMarketIds, type RefreshSummary } from './refreshHorizons';
import { fundOwnerBooks, type OwnerFunding } from './fundBooks';
import { claimRefreshSlot } from './refreshThrottle';

/**
 * Run a book-changing job on the book's trade lane (so it serializes with the book's trades) and
 * wait for its result; null when it did not finish in time (the job still runs).
 */
export async function runOnLane<J extends 'resolve' | 'settle' | 'void'>(deps: Deps, job: J, data: JobPayload<'trade', J>, laneKey: string, jobId: string): Promise<JobResult<'trade', J> | null> {
  const r = await deps.hub.enqueueAndWait('trade', job, data, { jobId, laneKey, attempts: 3, backoff: { type: 'exponential', delay: 100 }, waitMs: deps.config.TRADE_WAIT_MS * 3 });
  return r.finished ? r.result : null;
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
    for (const o of r.outcomes) {
      const list = o.outcome === 'resolved' ? out.resolved : o.outcome === 'voided' ? out.voided : o.outcome === 'waiting' ? out.waiting : o.outcome === 'skipped' ? out.skipped : null;
      list?.push(o.marketId);
    }
  });
  return out;
}

/** How long the refresh endpoint waits for its horizon pass, a failover included. */
const REFRESH_WAIT_MS = 60_000;

/**
 * Enqueue a horizon pass and wait for it (the API's refresh endpoint), then the owner funds the
 * unfunded baseline books in scope that it can pay for (an explicit act: the scheduled pass never spends).
 */
export async function refreshNow(deps: Deps, scope: { workspaceId?: string; metricId?: string }, opts: { force?: boolean } = {}): Promise<(RefreshSummary & OwnerFunding) | null> {
  // Unforced: at most once a minute per workspace (429 rate_limited otherwise).
  if (scope.workspaceId) await claimRefreshSlot(deps, scope.workspaceId, opts.force ?? false);
  // A fresh id per call: a reused id would hand back an earlier pass's result. The pass is idempotent,
  // so a wait its queue's connection cut (a Redis failover: the job may be gone with its master) waits
  // for the queue to answer again and enqueues the pass anew, within the one deadline (issue 66).
  const deadline = Date.now() + REFRESH_WAIT_MS;
  const queue = deps.hub.queueFor('horizons');
  let r;
  do r = await deps.hub.enqueueAndWait('horizons', 'refresh', scope, { jobId: `refresh-${randomUUID()}`, waitMs: Math.max(1, deadline - Date.now()) });
  while (!r.finished && r.interrupted && Date.now() < deadline && (await deps.hub.whenConnected(queue, deadline - Date.now())));
  if (!r.finished) return null;
  const funding = await inTransaction(deps.ds, (m) => fundOwnerBooks(m, scope, deps.clock.now()));
  return { ...r.result, ...funding };
}


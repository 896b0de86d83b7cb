import { tradeRequest } from '../../../jobs/definitions';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { TRADE_JOB_OPTS } from './tradeBatches';
import { recordFailure, type TradeJobData } from './tradeRequests';
import { changedRows } from '../../db/queryRows';

/**
 * Make sure a pending request has a live job: enqueue it again when its job is gone (lost with a
 * killed process or a Redis restart), or retry it when its job failed (every attempt hit a database
 * outage). Safe to call any number of times: the job id is the request id and the trade
 * transaction is a no-op for a request already applied.
 */
export async function ensureTradeJob(deps: Deps, data: TradeJobData): Promise<'present' | 'enqueued' | 'retried'> {
  const queue = deps.hub.queue(deps.hub.queueFor('trade', data.marketId));
  const existing = await queue.getJob(data.requestId);
  if (existing) {
    const state = await existing.getState();
    if (state === 'failed') {
      await existing.retry('failed');
      return 'retried';
    }
    if (state !== 'completed' && state !== 'unknown') return 'present';
    // Finished but the request is still pending: run it again (a no-op if it did apply).
    await existing.remove().catch(() => undefined);
  }
  await deps.hub.enqueue('trade', 'trade', { trades: [data] }, { jobId: data.requestId, laneKey: data.marketId, ...TRADE_JOB_OPTS });
  return 'enqueued';
}

export interface RecoverySummary {
  pending: number;
  requeued: number;
  failed: number;
}

/**
 * The recovery pass (at worker start and every few seconds): every request still pending after
 * `olderThanMs` gets a live job again, so no Idempotency-Key waits forever. A request stored
 * without its job (written before the journal existed) gets a definite failure instead, which
 * frees its key.
 */
export async function recoverPendingTrades(deps: Deps, olderThanMs: number, limit = 500): Promise<RecoverySummary> {
  const rows: Array<{ request_id: string; agent_id: string; workspace_id: string; job: unknown }> = await deps.ds.query(
    `SELECT request_id, agent_id, workspace_id, job FROM trade_requests
      WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1::float8 / 1000)
      ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit],
  );
  const out: RecoverySummary = { pending: rows.length, requeued: 0, failed: 0 };
  for (const r of rows) {
    const parsed = tradeRequest.safeParse(r.job);
    if (!parsed.success) {
      const lost = new DomainError('trade_not_applied', 'The trade was lost before it ran and nothing was applied; retry with the same Idempotency-Key to run it.');
      await recordFailure(deps.ds, { requestId: r.request_id, agentId: r.agent_id, workspaceId: r.workspace_id }, lost);
      out.failed++;
      continue;
    }
    if ((await ensureTradeJob(deps, parsed.data)) !== 'present') {
      out.requeued++;
      await deps.ds.query(`UPDATE trade_requests SET recovered_at = now() WHERE request_id = $1`, [r.request_id]);
    }
  }
  return out;
}


/** Idempotency records are kept at least 24 hours (spec §4.5): settled ones older than 48 hours go. */
export async function purgeTradeRequests(deps: Deps): Promise<{ deleted: number }> {
  return { deleted: await changedRows(deps.ds, `DELETE FROM trade_requests WHERE created_at < now() - interval '48 hours' AND status <> 'pending'`) };
}

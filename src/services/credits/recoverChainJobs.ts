import type { Job } from 'bullmq';
import type { Deps } from '../../deps';
import { chainOf } from '../../chain/client';
import { enqueueCheck } from './deposits';
import { enqueueSend } from './withdrawals';

export interface ChainRecovery {
  deposits: number;
  withdrawals: number;
}

/** A failed job of that id (attempts spent before it recorded its check) would swallow the re-enqueue: retry it instead. */
async function alive(job: Job): Promise<void> {
  if (await job.isFailed()) await job.retry('failed');
}

/**
 * The watchdog's sweep: every pending or not yet final deposit and every queued or signed
 * withdrawal that no job has looked at for a while gets its next check enqueued again (its job lost
 * with a Redis restart or a killed process). The job id carries the check number the row recorded,
 * so a job still alive makes this a no-op, and a withdrawal job only ever signs once (signOnce).
 */
export async function recoverChainJobs(deps: Deps, limit = 500): Promise<ChainRecovery> {
  const chain = chainOf(deps.config);
  if (!chain) return { deposits: 0, withdrawals: 0 };
  const { chainId, treasury } = chain.settings;
  // A live job looks at its row at least every CHAIN_RECHECK_MAX_MS: twice that without a look means no job.
  const staleMs = 2 * deps.config.CHAIN_RECHECK_MAX_MS;
  const deposits: Array<{ id: string; checks: number }> = await deps.ds.query(
    `SELECT id, checks FROM deposits
      WHERE (status = 'pending' OR (status = 'credited' AND NOT final)) AND chain_id = $3
        AND coalesce(checked_at, created_at) < now() - make_interval(secs => $1::float8 / 1000)
      ORDER BY checked_at NULLS FIRST LIMIT $2`,
    [staleMs, limit, chainId],
  );
  for (const d of deposits) await alive(await enqueueCheck(deps, d.id, d.checks, 0));
  const withdrawals: Array<{ id: string; checks: number }> = await deps.ds.query(
    `SELECT id, checks FROM withdrawals
      WHERE status IN ('queued','signed') AND (signer IS NULL OR signer = $3)
        AND coalesce(checked_at, created_at) < now() - make_interval(secs => $1::float8 / 1000)
      ORDER BY checked_at NULLS FIRST LIMIT $2`,
    [staleMs, limit, treasury],
  );
  for (const w of withdrawals) await alive(await enqueueSend(deps, w.id, w.checks, 0));
  return { deposits: deposits.length, withdrawals: withdrawals.length };
}

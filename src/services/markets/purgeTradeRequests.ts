import type { Deps } from '../../deps';

/** Idempotency records are kept at least 24 hours (spec §4.5): settled ones older than 48 hours go. */
export async function purgeTradeRequests(deps: Deps): Promise<{ deleted: number }> {
  const r = await deps.ds.query(`DELETE FROM trade_requests WHERE created_at < now() - interval '48 hours' AND status <> 'pending'`);
  return { deleted: r[1] ?? 0 };
}

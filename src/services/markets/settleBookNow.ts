import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { settleBook } from './horizonPass';

/** A lane's settle job: one book settled early at the value (clamped to its range), in one transaction. */
export async function settleBookNow(deps: Deps, marketId: string, value: number, reason: string): Promise<{ marketId: string; settled: boolean; payout: bigint }> {
  return inTransaction(deps.ds, (m) => settleBook(m, marketId, value, reason, deps.clock.now()));
}

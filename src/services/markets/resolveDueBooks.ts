import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { resolveDueBatch, type ResolveOutcome } from './horizonPass';

/** A lane's resolve job: its due books resolved (or voided, or left waiting) in one transaction. */
export async function resolveDueBooks(deps: Deps, marketIds: string[]): Promise<ResolveOutcome[]> {
  const now = deps.clock.now();
  return inTransaction(deps.ds, (m) => resolveDueBatch(m, marketIds, now));
}

import type { Deps } from '../src/deps';
import { inTransaction } from '../src/db/tx';
import { resolveDueBatch, settleBook } from '../src/services/lifecycle';
import { applyTradeJob } from '../src/services/trades';
import type { Processors } from './types';

/** trade-<k> lanes: everything that touches a book, in arrival order per market. */
export const tradeProcessors = (deps: Deps): Processors<'trade'> => ({
  trade: async (data) => applyTradeJob(deps, data),
  resolve: async (data) => {
    const now = deps.clock.now();
    const out = await inTransaction(deps.ds, (m) => resolveDueBatch(m, data.marketIds, now));
    return { outcomes: out.map((r) => ({ ...r, payout: r.payout?.toString() })) };
  },
  settle: async (data) => {
    const r = await inTransaction(deps.ds, (m) => settleBook(m, data.marketId, data.value, data.reason, deps.clock.now()));
    return { ...r, payout: r.payout.toString() };
  },
});

import type { Deps } from '../src/deps';
import { inTransaction } from '../src/db/tx';
import { resolveIfDue, settleBook } from '../src/services/lifecycle';
import { applyTradeJob } from '../src/services/trades';
import type { Processors } from './types';

/** trade-<k> lanes: everything that touches a book, in arrival order per market. */
export const tradeProcessors = (deps: Deps): Processors<'trade'> => ({
  trade: async (data) => applyTradeJob(deps, data),
  resolve: async (data) => {
    const out = [];
    for (const id of data.marketIds) {
      const r = await inTransaction(deps.ds, (m) => resolveIfDue(m, id, deps.clock.now()));
      out.push({ ...r, payout: r.payout?.toString() });
    }
    return { outcomes: out };
  },
  settle: async (data) => {
    const r = await inTransaction(deps.ds, (m) => settleBook(m, data.marketId, data.value, data.reason, deps.clock.now()));
    return { ...r, payout: r.payout.toString() };
  },
});

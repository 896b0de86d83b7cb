import type { Deps } from '../src/deps';
import { resolveDueBooks, settleBookNow, voidBookNow } from '../src/services/lifecycle';
import { applyCancelOrder, applyExpireOrder, applyPlaceOrder, applyTradeBatch } from '../src/services/trading';
import type { Processors } from './types';

/** trade-<k> lanes: everything that touches a book, in arrival order per market. */
export const tradeProcessors = (deps: Deps): Processors<'trade'> => ({
  // A batch of requests the API gathered for this lane; its outcomes go out in its commit's notices.
  trade: async (data) => {
    await applyTradeBatch(deps, data.trades);
  },
  resolve: async (data) => ({ outcomes: await resolveDueBooks(deps, data.marketIds) }),
  settle: async (data) => settleBookNow(deps, data.marketId, data.value, data.reason),
  void: async (data) => voidBookNow(deps, data.marketId, data.reason),
  placeOrder: async (data) => applyPlaceOrder(deps, data),
  cancelOrder: async (data) => applyCancelOrder(deps, data),
  expireOrder: async (data) => applyExpireOrder(deps, data),
});

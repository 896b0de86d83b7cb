import type { Deps } from '../src/deps';
import { applyTradeJob } from '../src/services/trades';
import type { Processors } from './types';

/** trade-<k> lanes: everything that touches a book, in arrival order per market. */
export const tradeProcessors = (deps: Deps): Processors<'trade'> => ({
  trade: async (data) => applyTradeJob(deps, data),
});

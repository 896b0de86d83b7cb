import type { Deps } from '../src/deps';
import { refreshHorizons } from '../src/services/lifecycle';
import { expireDueOrders, purgeTradeRequests } from '../src/services/trading';
import { resolveDueNow } from '../src/services/lifecycle';
import type { Processors } from './types';

/** horizons: spawn/retire books by date, find due books and resolve them on their lanes, housekeeping. */
export const horizonProcessors = (deps: Deps): Processors<'horizons'> => ({
  refresh: async (data) => refreshHorizons(deps, data),
  resolveDue: async (data) => resolveDueNow(deps, data.workspaceId ?? null),
  // Idempotency records are kept at least 24 hours (spec §4.5); older ones go.
  purgeRequests: async () => purgeTradeRequests(deps),
  // The sweep behind each order's delayed expiry job.
  expireOrders: async () => ({ expired: await expireDueOrders(deps) }),
});

import type { Deps } from '../src/deps';
import { resolveDueBooks, settleBookNow } from '../src/services/markets';
import { queueFamilies } from '../jobs/definitions';
import { applyCancelOrder, applyExpireOrder, applyPlaceOrder, applyTradeJob, type TradeJobData } from '../src/services/markets';
import type { Processors } from './types';

const FOLLOWERS = 31;

/**
 * Trade jobs waiting right behind this one on its lane, in arrival order, up to the first job of
 * another kind (a settle or resolve must still see every trade before it and none after).
 */
async function followersOf(deps: Deps, queueName: string, selfId: string | undefined): Promise<TradeJobData[]> {
  const waiting = await deps.hub.queue(queueName).getWaiting(0, FOLLOWERS); // oldest first
  const out: TradeJobData[] = [];
  for (const j of waiting) {
    if (!j || j.id === selfId) continue;
    if (j.name !== 'trade') break;
    const parsed = queueFamilies.trade.jobs.trade.safeParse(j.data);
    if (!parsed.success) break;
    out.push(parsed.data);
  }
  return out;
}

/**
 * Group commit only on a serial lane, and only on Redis: where the lane runs jobs at once, other
 * workers take the waiting trades themselves, and a group would lock their books in crossing orders
 * (deadlocks); on BullMQ's Postgres backend reading the waiting jobs costs more than the commits it
 * saves (200 trades on one book: 25 s with it, 15 s without, in the same run).
 */
const groupCommit = (deps: Deps) => deps.config.TRADE_LANES_SERIAL && deps.hub.backendKind === 'redis';

/** trade-<k> lanes: everything that touches a book, in arrival order per market. */
export const tradeProcessors = (deps: Deps): Processors<'trade'> => ({
  trade: async (data, job) => applyTradeJob(deps, data, groupCommit(deps) ? () => followersOf(deps, job.queueName, job.id) : undefined),
  resolve: async (data) => {
    const out = await resolveDueBooks(deps, data.marketIds);
    return { outcomes: out.map((r) => ({ ...r, payout: r.payout?.toString() })) };
  },
  settle: async (data) => {
    const r = await settleBookNow(deps, data.marketId, data.value, data.reason);
    return { ...r, payout: r.payout.toString() };
  },
  placeOrder: async (data) => applyPlaceOrder(deps, data),
  cancelOrder: async (data) => applyCancelOrder(deps, data),
  expireOrder: async (data) => applyExpireOrder(deps, data),
});

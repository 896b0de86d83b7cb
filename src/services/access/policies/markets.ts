import { rules } from './rule';

/** Markets (routes markets and lifecycle): read where the workspace reads, trade with trade, open, void and settle with manage. */

/** POST /metrics/:id/settle */
export const settleMetric = rules.manage();
/** POST /predictions/markets/refresh */
export const refresh = rules.manage();
/** POST /predictions/resolve */
export const resolve = rules.manage();
/** GET /predictions/markets */
export const list = rules.publicRead();
/** GET /predictions/markets/:id */
export const read = rules.publicRead();
/** GET /predictions/markets/:id/history */
export const readHistory = rules.publicRead();
/** POST /predictions/trade */
export const trade = rules.trade();
/** POST /predictions/markets/:id/trade */
export const tradeBook = rules.trade();
/** POST /predictions/markets/:id/fund */
export const fund = rules.trade();
/** POST /predictions/markets */
export const create = rules.manage();
/** POST /predictions/markets/:id/void */
export const voidBook = rules.manage();

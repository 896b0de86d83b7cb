import { rules } from './rule';

/** Resting orders: trade in the workspace. */

/** POST /predictions/orders */
export const create = rules.trade();
/** GET /predictions/orders */
export const list = rules.trade();
/** GET /predictions/orders/:id */
export const read = rules.trade();
/** DELETE /predictions/orders/:id */
export const remove = rules.trade();
/** GET /predictions/markets/:id/orderbook */
export const readOrderbook = rules.publicRead();

import { rules } from './rule';

/** Participants (routes agents, participants, portfolio): the caller itself, or manage in a workspace the target belongs to (self/admin); creating and deleting children. */

/** POST /agents/register */
export const register = rules.none();
/** GET /agents/me */
export const readMe = rules.identity('account:read');
/** GET /agents/:id */
export const read = rules.selfAdmin();
/** GET /agents/:id/balance */
export const readBalance = rules.selfAdmin();
/** POST /agents */
export const createChild = rules.custom({ label: 'identity', identity: true, scope: 'account:agents' });
/** GET /agents/mine */
export const readMine = rules.custom({ label: 'identity', identity: true, scope: 'account:read' });
/** GET /agents */
export const list = rules.manage();
/** DELETE /agents/:id */
export const remove = rules.custom({ label: 'admin', identity: true, scope: 'account:agents' });
/** GET /agents/:id/trades */
export const readTrades = rules.selfAdmin();
/** GET /agents/:id/positions */
export const readPositions = rules.selfAdmin();
/** GET /agents/:id/market-pnl */
export const readMarketPnl = rules.selfAdmin();
/** GET /agents/:id/dashboard */
export const readDashboard = rules.selfAdmin();

import { rules } from './rule';

/** MCP connections: the caller's own, by account scope. */

/** GET /connections */
export const list = rules.identity('account:read');
/** GET /connections/:id/calls */
export const readCalls = rules.identity('account:read');
/** PUT /connections/:id/ask */
export const setAsk = rules.identity('account:keys');
/** DELETE /connections/:id */
export const remove = rules.identity('account:keys');

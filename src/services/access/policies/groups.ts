import { rules } from './rule';

/** Groups: members read, managers change; a manager grants only capabilities it holds itself. */

/** GET /groups */
export const list = rules.read();
/** GET /groups/:id */
export const read = rules.read();
/** POST /groups */
export const create = rules.manage();
/** PUT /groups/:id */
export const set = rules.manage();
/** DELETE /groups/:id */
export const remove = rules.manage();
/** POST /groups/:id/members */
export const addMember = rules.manage();
/** DELETE /groups/:id/members/:agentId */
export const removeMember = rules.manage();

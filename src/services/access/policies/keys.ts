import { rules } from './rule';

/** Participant keys: the participant itself or its creator, never a workspace admin (self/owner). */

/** GET /agents/:id/keys */
export const list = rules.selfOwner('account:keys');
/** POST /agents/:id/keys */
export const create = rules.selfOwner('account:keys');
/** PATCH /agents/:id/keys/:keyId */
export const edit = rules.selfOwner('account:keys');
/** DELETE /agents/:id/keys/:keyId */
export const remove = rules.selfOwner('account:keys');

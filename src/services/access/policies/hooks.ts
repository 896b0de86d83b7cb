import { rules } from './rule';

/** Webhooks and notification settings: the hook's owner; notification settings the participant itself or its creator. */

/** POST /hooks */
export const create = rules.read();
/** GET /hooks */
export const list = rules.identity();
/** GET /hooks/:id */
export const read = rules.identity();
/** PATCH /hooks/:id */
export const edit = rules.identity();
/** DELETE /hooks/:id */
export const remove = rules.identity();
/** POST /hooks/:id/rotate-secret */
export const rotateSecret = rules.identity();
/** POST /hooks/:id/test */
export const sendTest = rules.identity();
/** GET /hooks/:id/deliveries */
export const readDeliveries = rules.identity();
/** POST /hooks/:id/deliveries/:deliveryId/retry */
export const retryDelivery = rules.identity();
/** POST /hooks/:id/replay */
export const replay = rules.identity();
/** GET /agents/:id/notifications */
export const readNotifications = rules.selfOwner('account:read');
/** PUT /agents/:id/notifications */
export const setNotifications = rules.selfOwner('account:write');

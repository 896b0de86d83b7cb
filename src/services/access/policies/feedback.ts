import { rules } from './rule';

/** Feedback: any identity sends, the platform operator reads. */

/** POST /feedback */
export const create = rules.identity('account:feedback');
/** GET /feedback */
export const list = rules.platform();

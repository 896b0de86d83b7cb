import { rules } from './rule';

/** The data room: read where the workspace reads. */

/** GET /data-room/actions */
export const readActions = rules.publicRead();

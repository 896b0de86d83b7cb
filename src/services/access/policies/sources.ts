import { rules } from './rule';

/** Sources: read with read, change with manage. */

/** GET /sources */
export const list = rules.read();
/** POST /sources */
export const create = rules.manage();
/** GET /sources/:id */
export const read = rules.read();
/** PUT /sources/:id */
export const set = rules.manage();
/** DELETE /sources/:id */
export const remove = rules.manage();
/** GET /sources/:id/text */
export const readText = rules.read();
/** GET /sources/:id/tree */
export const readTree = rules.read();
/** GET /sources/:id/file */
export const readFile = rules.read();

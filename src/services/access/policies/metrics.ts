import { rules } from './rule';

/** Metrics: read where the workspace reads, change with manage. */

/** GET /metrics */
export const list = rules.publicRead();
/** POST /metrics */
export const create = rules.manage();
/** POST /metrics/reorder */
export const reorder = rules.manage();
/** POST /metrics/migrate-leaf-types */
export const migrateLeafTypes = rules.manage();
/** POST /metrics/logs/purge */
export const purgeLogs = rules.manage();
/** GET /metrics/:id */
export const read = rules.publicRead();
/** PUT /metrics/:id */
export const set = rules.manage();
/** DELETE /metrics/:id */
export const remove = rules.manage();
/** GET /metrics/:id/logs */
export const readLogs = rules.read();
/** POST /metrics/:id/logs/backfill */
export const backfillLogs = rules.manage();
/** GET /updates */
export const readUpdates = rules.manage();

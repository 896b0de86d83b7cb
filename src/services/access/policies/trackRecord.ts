import { rules } from './rule';

/** The track record: read where the workspace reads. */

/** GET /track-record */
export const list = rules.publicRead();
/** GET /track-record/csv */
export const readCsv = rules.publicRead();

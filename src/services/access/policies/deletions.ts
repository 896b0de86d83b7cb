import { rules } from './rule';

/** Deletion jobs: any identity may follow the one it started (the service answers not_found for others). */

/** GET /deletions/:id */
export const read = rules.identity();

/** Large deletions (workspaces, participants) run as jobs in bounded batches, with readable progress. */
export * from './deletions';
export { DEFAULT_LIMITS, type Limits } from './phases';

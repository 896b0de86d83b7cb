import { rules } from './rule';

/** Standings, seasons, the leaderboard: open reads; seasons are the platform operator's. */

/** GET /agents/:id/public */
export const readPublic = rules.optional();
/** GET /leaderboard */
export const readLeaderboard = rules.none();
/** GET /seasons */
export const readSeasons = rules.none();
/** GET /seasons/:id */
export const readSeason = rules.none();
/** POST /seasons */
export const createSeason = rules.platform();
/** PUT /seasons/:id */
export const setSeason = rules.platform();
/** GET /marketplace/stats */
export const readMarketplaceStats = rules.none();
/** GET /benchmark */
export const readBenchmark = rules.none();

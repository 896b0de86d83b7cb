/** Participants' standings (issue 23): per-participant aggregates written when books resolve, profiles, the leaderboard and seasons. */
export * from './recordStandings';
export * from './totals';
export * from './leaderboard';
export { clearStandingsCache, STANDINGS_TTL_MS } from './boardCache';
export * from './profile';
export * from './seasons';
export * from './marketplace';

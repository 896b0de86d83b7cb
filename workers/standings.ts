import type { Deps } from '../src/deps';
import { recordPendingStandings, sweepPendingStandings } from '../src/services/standings';
import type { Processors } from './types';

/** standings: resolved books added to the participants' aggregates, after their resolution committed. */
export const standingsProcessors = (deps: Deps): Processors<'standings'> => ({
  record: async (data) => recordPendingStandings(deps, data.marketIds),
  sweep: async () => sweepPendingStandings(deps),
});

import { recordScorecard, respawnProposalBranches } from './proposals';
import { markStandingsPending } from './standings';
import { recordBookResolved } from './trackRecord';
import { assertWired, register } from './wiring';

/** Register every cross-area callback (see services/wiring), then refuse to start if one is missing. */
export function wireAreas(): void {
  register('bookResolved', async (m, mk, value, finalConsensus, now) => {
    await recordScorecard(m, mk, value, finalConsensus, now);
    await recordBookResolved(m, mk, value, now);
  });
  register('bookResolvedForStats', markStandingsPending);
  register('proposalDatesChanged', respawnProposalBranches);
  assertWired();
}

import { recordScorecard, respawnProposalBranches } from './proposals';
import { markStandingsPending } from './standings';
import { assertWired, register } from './wiring';

/** Register every cross-area callback (see services/wiring), then refuse to start if one is missing. */
export function wireAreas(): void {
  register('bookResolved', recordScorecard);
  register('bookResolvedForStats', markStandingsPending);
  register('proposalDatesChanged', respawnProposalBranches);
  assertWired();
}

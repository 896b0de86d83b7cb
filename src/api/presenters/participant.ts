import { toCredits } from '../../domain/money';
import type { claimParticipant, createChildParticipant, onboardParticipant, participantsOfCaller, participantsOfWorkspace, removeParticipant } from '../../services/participants';

/** Participants as the API shows them: the services' nano-unit amounts as credits. */

type Row<F extends (...a: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;

export function presentMyParticipant(r: Row<typeof participantsOfCaller>[number]) {
  return { ...r, balance: toCredits(r.balance), earned: toCredits(r.earned), settledEarnings: toCredits(r.settledEarnings), openEarnings: toCredits(r.openEarnings) };
}

export function presentWorkspaceParticipant(r: Row<typeof participantsOfWorkspace>[number]) {
  return { ...r, balance: toCredits(r.balance), realizedPnl: toCredits(r.realizedPnl), pnlConsensus: toCredits(r.pnlConsensus), pnlMetric: toCredits(r.pnlMetric) };
}

export function presentChild(r: Row<typeof createChildParticipant>) {
  return { ...r, balance: toCredits(r.balance) };
}

export function presentRemoval(r: Row<typeof removeParticipant>) {
  return { ...r, creditsReturned: toCredits(r.creditsReturned) };
}

export function presentOnboarded(r: Row<typeof onboardParticipant>) {
  return { ...r, credits: toCredits(r.credits), creditsAfterClaim: toCredits(r.creditsAfterClaim) };
}

export function presentClaim(r: Row<typeof claimParticipant>) {
  return { ...r, creditsToppedUp: toCredits(r.creditsToppedUp) };
}

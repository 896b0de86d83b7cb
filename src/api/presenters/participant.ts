import { presentDeletion } from './deletion';
import type { WorkspaceTemplate } from '../../services/templates';
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
  return { ...r, creditsReturned: toCredits(r.creditsReturned), deletion: presentDeletion(r.deletion) };
}

export function presentOnboarded(r: Row<typeof onboardParticipant>) {
  return { ...r, credits: toCredits(r.credits), creditsAfterClaim: toCredits(r.creditsAfterClaim) };
}

export function presentClaim(r: Row<typeof claimParticipant>) {
  return { ...r, creditsToppedUp: toCredits(r.creditsToppedUp) };
}

/** GET /onboard/templates: a template as POST /onboard applies it. */
export function presentTemplate(t: WorkspaceTemplate) {
  return {
    id: t.id,
    title: t.title,
    description: t.description,
    metrics: t.metrics.map((x) => ({ name: x.name, description: x.description, value: x.value ?? 0, formula: x.formula ?? null, marketRangeMax: x.marketRangeMax ?? 1000 })),
    starterProposal: t.starterProposal ? { title: t.starterProposal.title, description: t.starterProposal.description, expects: t.starterProposal.expects } : null,
  };
}

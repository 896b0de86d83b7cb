import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { claim, claimInfo, joinWaitlist, onboard } from './onboarding';

/** Key-first onboarding: an unclaimed participant owning a new workspace, with the reduced grant and a claim token. */
export async function onboardParticipant(deps: Deps, input: Parameters<typeof onboard>[2]): ReturnType<typeof onboard> {
  return onboard(deps.ds, deps.config, input);
}

/** Who a claim token claims; 404 for an unknown or used token. */
export async function claimTokenInfo(deps: Deps, token: string): ReturnType<typeof claimInfo> {
  return claimInfo(deps.ds, token);
}

/** Claim an onboarded participant: top it up to the full signup grant and consume the token. */
export async function claimParticipant(deps: Deps, actor: Principal, token: string): ReturnType<typeof claim> {
  return claim(deps.ds, deps.config, actor, token);
}

/** Put an address on the waitlist; 409 when it is already there. */
export async function joinTheWaitlist(deps: Deps, email: string): ReturnType<typeof joinWaitlist> {
  return joinWaitlist(deps.ds, email);
}

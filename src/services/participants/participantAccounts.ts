import type { Deps } from '../../deps';
import { creditAgent, getAgent, registerAgent } from './agents';
import { resolveKey } from './identity';

/** A participant by id or nickname (case-insensitive); null when none matches. */
export async function participantByIdOrNickname(deps: Deps, idOrNickname: string): ReturnType<typeof getAgent> {
  return getAgent(deps.ds, idOrNickname);
}

/** Register a participant with 0 credits and one key (scopes *), shown once. */
export async function registerParticipant(deps: Deps, input: Parameters<typeof registerAgent>[1]): ReturnType<typeof registerAgent> {
  return registerAgent(deps.ds, input);
}

/** Credit a workspace member: the master key issues new credits; a manager moves its own. */
export async function creditParticipant(deps: Deps, p: Parameters<typeof creditAgent>[1]): ReturnType<typeof creditAgent> {
  return creditAgent(deps.ds, p);
}

/** The participant and key behind a raw key value; null when unknown or revoked. */
export async function keyHolder(deps: Deps, raw: string): ReturnType<typeof resolveKey> {
  return resolveKey(deps.ds, raw);
}

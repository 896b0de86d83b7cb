import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { createKey, listKeys, resolveOwnedAgent, revokeKey, updateKey } from './keys';

/*
 * Keys of a participant the caller owns ({id} may be 'me'; the participant itself or its creator):
 * each use case resolves the owner first (refusals as keys.ts decides), then acts.
 */

export async function keysOfParticipant(deps: Deps, actor: Principal, idParam: string): ReturnType<typeof listKeys> {
  return listKeys(deps.ds, await resolveOwnedAgent(deps.ds, actor, idParam));
}

export async function mintParticipantKey(deps: Deps, actor: Principal, idParam: string, input: Parameters<typeof createKey>[3]): ReturnType<typeof createKey> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam);
  return createKey(deps.ds, actor, agentId, input);
}

export async function editParticipantKey(deps: Deps, actor: Principal, idParam: string, keyId: string, patch: Parameters<typeof updateKey>[4]): ReturnType<typeof updateKey> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam);
  return updateKey(deps.ds, actor, agentId, keyId, patch);
}

export async function revokeParticipantKey(deps: Deps, actor: Principal, idParam: string, keyId: string): Promise<void> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam);
  await revokeKey(deps.ds, actor, agentId, keyId);
}

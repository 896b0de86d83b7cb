import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { createChild, deleteParticipant, listMine, listWorkspaceParticipants } from './participants';

/** A child participant (bot) with its key and memberships; `authorize` returns the caller's capabilities in a listed workspace, or throws. */
export async function createChildParticipant(
  deps: Deps,
  actor: Principal,
  input: Parameters<typeof createChild>[2],
  authorize: Parameters<typeof createChild>[3],
): ReturnType<typeof createChild> {
  return createChild(deps.ds, actor, input, authorize);
}

/** The caller's own participant, then the bots it created or claimed, with earnings as of now. */
export async function participantsOfCaller(deps: Deps, agentId: string): ReturnType<typeof listMine> {
  return listMine(deps.ds, agentId, deps.clock.now());
}

/** The workspace's participants with groups, a display role and P&L. */
export async function participantsOfWorkspace(deps: Deps, ws: Parameters<typeof listWorkspaceParticipants>[1]): ReturnType<typeof listWorkspaceParticipants> {
  return listWorkspaceParticipants(deps.ds, ws);
}

/** Delete a participant; `managesIn` says whether the caller holds manage in one of its workspaces. */
export async function removeParticipant(
  deps: Deps,
  actor: Principal,
  idParam: string,
  managesIn: (workspaceId: string) => Promise<boolean>,
): ReturnType<typeof deleteParticipant> {
  return deleteParticipant(deps.ds, actor, idParam, managesIn);
}

import type { Deps } from '../../deps';
import type { Capability } from '../../domain/capabilities';
import { addGroupMember, createGroup, deleteGroup, getGroup, listGroups, removeGroupMember, updateGroup } from './groups';

/*
 * Permission groups of a workspace, as use cases: `held` is what the caller holds there (nobody
 * grants a capability it does not hold); each write runs in its own transaction.
 */

type Held = ReadonlySet<Capability>;

export async function groupsOfWorkspace(deps: Deps, workspaceId: string): ReturnType<typeof listGroups> {
  return listGroups(deps.ds, workspaceId);
}

export async function groupOfWorkspace(deps: Deps, workspaceId: string, groupId: string): ReturnType<typeof getGroup> {
  return getGroup(deps.ds, workspaceId, groupId);
}

export async function addWorkspaceGroup(deps: Deps, workspaceId: string, held: Held, input: Parameters<typeof createGroup>[3]): ReturnType<typeof createGroup> {
  return createGroup(deps.ds, workspaceId, held, input);
}

export async function editWorkspaceGroup(deps: Deps, workspaceId: string, groupId: string, held: Held, input: Parameters<typeof updateGroup>[4]): ReturnType<typeof updateGroup> {
  return updateGroup(deps.ds, workspaceId, groupId, held, input);
}

export async function removeWorkspaceGroup(deps: Deps, workspaceId: string, groupId: string, held: Held): Promise<void> {
  await deleteGroup(deps.ds, workspaceId, groupId, held);
}

export async function putInGroup(deps: Deps, workspaceId: string, groupId: string, agentId: string, held: Held): ReturnType<typeof addGroupMember> {
  return addGroupMember(deps.ds, workspaceId, groupId, agentId, held);
}

export async function takeOutOfGroup(deps: Deps, workspaceId: string, groupId: string, agentId: string, held: Held): ReturnType<typeof removeGroupMember> {
  return removeGroupMember(deps.ds, workspaceId, groupId, agentId, held);
}

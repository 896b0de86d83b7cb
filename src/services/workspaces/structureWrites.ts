import type { EntityManager } from 'typeorm';
import { Group, GroupMember, Membership } from '../../entities/workspace';

/**
 * Workspaces owns `workspaces`, `groups`, `group_members` and `memberships` (src/services/tables.ts).
 * Access (group editing), participants (sub-agents joining) and deletions change them through these.
 */

export async function insertGroup(m: EntityManager, group: Group): Promise<void> {
  await m.insert(Group, group);
}

export async function updateGroupRow(m: EntityManager, groupId: string, fields: Pick<Group, 'name' | 'capabilities' | 'metricPermissions' | 'sourcePermissions'>): Promise<void> {
  await m.update(Group, { id: groupId }, fields);
}

export async function deleteGroupRow(m: EntityManager, groupId: string): Promise<void> {
  await m.delete(Group, { id: groupId });
}

/** Membership of the workspace and of the group (each kept when already there). */
export async function joinGroup(m: EntityManager, workspaceId: string, groupId: string, agentId: string): Promise<void> {
  await m.createQueryBuilder().insert().into(Membership).values({ workspaceId, agentId }).orIgnore().execute();
  await m.createQueryBuilder().insert().into(GroupMember).values({ groupId, agentId }).orIgnore().execute();
}

export async function leaveGroup(m: EntityManager, groupId: string, agentId: string): Promise<void> {
  await m.delete(GroupMember, { groupId, agentId });
}

/** A participant leaves the workspace: its groups there and its membership go (its positions and history stay its own). */
export async function leaveWorkspace(m: EntityManager, workspaceId: string, agentId: string): Promise<void> {
  await m.query(`DELETE FROM group_members gm USING groups g WHERE g.id = gm.group_id AND g.workspace_id = $1 AND gm.agent_id = $2`, [workspaceId, agentId]);
  await m.delete(Membership, { workspaceId, agentId });
}

/** A new participant's membership and groups (it has none yet, so plain inserts). */
export async function enrol(m: EntityManager, workspaceId: string, agentId: string, groupIds: readonly string[]): Promise<void> {
  await m.query(`INSERT INTO memberships (workspace_id, agent_id) VALUES ($1, $2)`, [workspaceId, agentId]);
  for (const groupId of groupIds) await m.query(`INSERT INTO group_members (group_id, agent_id) VALUES ($1, $2)`, [groupId, agentId]);
}

/** The deletion's first mark: the workspace stops answering (kept when already marked). */
export async function markWorkspaceDeleting(m: EntityManager, workspaceId: string, now: Date): Promise<void> {
  await m.query(`UPDATE workspaces SET deleting_at = coalesce(deleting_at, $2) WHERE id = $1`, [workspaceId, now]);
}

/** The deletion's last step: the row goes (its dependants were removed before). */
export async function deleteWorkspaceRow(m: EntityManager, workspaceId: string): Promise<void> {
  await m.query(`DELETE FROM workspaces WHERE id = $1`, [workspaceId]);
}

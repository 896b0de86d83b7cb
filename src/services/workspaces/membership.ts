import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { DomainError } from '../../errors';
import { leaveWorkspace } from './structureWrites';
import { addMember, isMember, workspaceByIdOrSlug } from './workspaces';

type Workspace = NonNullable<Awaited<ReturnType<typeof workspaceByIdOrSlug>>>;

/** Join a workspace as a Trader (idempotent); 404 for an unknown one; `admit` is the route's policy (a private one: 403). */
export async function joinPublicWorkspace(deps: Deps, agentId: string, idOrSlug: string, admit: (ws: Workspace) => void): Promise<Workspace> {
  const ws = await workspaceByIdOrSlug(deps, idOrSlug);
  if (!ws) throw new DomainError('workspace_not_found', `No workspace "${idOrSlug}" exists.`);
  admit(ws);
  await inTransaction(deps.ds, (m) => addMember(m, ws.id, agentId, 'Trader'));
  return ws;
}

export async function isWorkspaceMember(deps: Deps, workspaceId: string, agentId: string): Promise<boolean> {
  return isMember(deps.ds, workspaceId, agentId);
}

/** One workspace the caller belongs to, with its part in it (GET /workspaces). */
export interface MyWorkspaceRow {
  id: string;
  name: string;
  slug: string;
  role: 'owner' | 'admin' | 'member';
  visibility: 'public' | 'private';
}

/**
 * The workspaces `agentId` is a member of (in deletion: left out), owned first then by joining; its
 * role: owner, admin (a group granting manage) or member. `onlyWorkspaceId`: a key locked to one.
 */
export async function workspacesOf(deps: Deps, agentId: string, onlyWorkspaceId: string | null = null): Promise<MyWorkspaceRow[]> {
  const rows: Array<{ id: string; name: string; slug: string; owned: boolean; admin: boolean; public: boolean }> = await deps.ds.query(
    `SELECT w.id, w.name, w.slug, w.public, (w.owner_id = $1) AS owned,
            EXISTS (SELECT 1 FROM group_members gm JOIN groups g ON g.id = gm.group_id
                     WHERE gm.agent_id = $1 AND g.workspace_id = w.id AND 'manage' = ANY (g.capabilities)) AS admin
       FROM memberships mb JOIN workspaces w ON w.id = mb.workspace_id
      WHERE mb.agent_id = $1 AND w.deleting_at IS NULL AND ($2::uuid IS NULL OR w.id = $2::uuid)
      ORDER BY (w.owner_id = $1) DESC, mb.joined_at ASC, w.created_at ASC
      LIMIT 1000`,
    [agentId, onlyWorkspaceId],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    slug: r.slug,
    role: r.owned ? 'owner' : r.admin ? 'admin' : 'member',
    visibility: r.public ? 'public' : 'private',
  }));
}

/**
 * DELETE /workspaces/current/members/{agentId}: a member leaves the workspace, removed by a caller
 * with manage who holds every capability the member's groups grant there (as taking it out of each
 * group would ask: `mayRemove`, the route's policy). The owner stays. What the member holds (positions, orders, history) stays theirs.
 */
export async function removeMember(deps: Deps, ws: { id: string; ownerId: string }, agentId: string, mayRemove: (memberCapabilities: string[]) => void): Promise<void> {
  if (agentId === ws.ownerId) throw new DomainError('conflict', 'The owner cannot be removed from their own workspace.');
  await inTransaction(deps.ds, async (m) => {
    if (!(await isMember(m, ws.id, agentId))) throw new DomainError('not_found', `Participant "${agentId}" is not a member of this workspace.`);
    const rows: Array<{ capabilities: string[] }> = await m.query(
      `SELECT g.capabilities FROM groups g JOIN group_members gm ON gm.group_id = g.id WHERE g.workspace_id = $1 AND gm.agent_id = $2`,
      [ws.id, agentId],
    );
    // The policy asked in the transaction: the member's groups are read there.
    mayRemove(rows.flatMap((r) => r.capabilities));
    await leaveWorkspace(m, ws.id, agentId);
  });
}

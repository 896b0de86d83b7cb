import type { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../errors';
import { inTransaction, pgCode } from '../../db/tx';
import { capabilityChangeNotHeld, type Capability, type PermissionGrant } from '../../domain/capabilities';
import type { WorkspaceRow } from '../workspaces';

export type MetricPermissions = Record<string, { read?: boolean; trade?: boolean }>;
export type SourcePermissions = Record<string, { read?: boolean }>;

export interface GroupRecord {
  id: string;
  workspaceId: string;
  name: string;
  system: boolean;
  capabilities: string[];
  metricPermissions: MetricPermissions;
  sourcePermissions: SourcePermissions;
  createdAt: Date;
  members: Array<{ id: string; nickname: string }>;
}

export const PUBLIC_GROUP = 'Public';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The groups whose grants apply to a caller in a workspace (spec §2.10, §5.3, §5.4): the groups it
 * is a member of, plus the Public group, which applies implicitly to every member and, in a public
 * workspace or through a view link, to everyone. Through publicness or a view link the Public
 * group always grants read.
 */
export async function loadGrants(
  ds: DataSource | EntityManager,
  ws: WorkspaceRow,
  agentId: string | null,
  viewLink: boolean,
): Promise<PermissionGrant[]> {
  const rows: Array<{
    name: string;
    system: boolean;
    capabilities: string[];
    metric_permissions: MetricPermissions;
    source_permissions: SourcePermissions;
    in_group: boolean;
    is_member: boolean;
  }> = await ds.query(
    `SELECT g.name, g.system, g.capabilities, g.metric_permissions, g.source_permissions,
            EXISTS (SELECT 1 FROM group_members gm WHERE gm.group_id = g.id AND gm.agent_id = $2) AS in_group,
            EXISTS (SELECT 1 FROM memberships mb WHERE mb.workspace_id = $1 AND mb.agent_id = $2) AS is_member
       FROM groups g
      WHERE g.workspace_id = $1
        AND (EXISTS (SELECT 1 FROM group_members gm WHERE gm.group_id = g.id AND gm.agent_id = $2)
             OR (g.system AND g.name = $3))`,
    [ws.id, agentId, PUBLIC_GROUP],
  );
  const out: PermissionGrant[] = [];
  for (const r of rows) {
    const isPublic = r.system && r.name === PUBLIC_GROUP;
    const seesPublic = ws.public || viewLink;
    if (isPublic && !r.in_group && !r.is_member && !seesPublic) continue;
    const caps = isPublic && seesPublic && !r.capabilities.includes('read') ? [...r.capabilities, 'read'] : r.capabilities;
    out.push({ capabilities: caps, metricPermissions: r.metric_permissions, sourcePermissions: r.source_permissions });
  }
  return out;
}

function rowToGroup(r: Record<string, unknown>): GroupRecord {
  return {
    id: r.id as string,
    workspaceId: r.workspace_id as string,
    name: r.name as string,
    system: r.system as boolean,
    capabilities: r.capabilities as string[],
    metricPermissions: r.metric_permissions as MetricPermissions,
    sourcePermissions: r.source_permissions as SourcePermissions,
    createdAt: r.created_at as Date,
    members: (r.members as GroupRecord['members']) ?? [],
  };
}

const GROUP_SELECT = `SELECT g.*, coalesce((SELECT json_agg(json_build_object('id', a.id, 'nickname', a.nickname) ORDER BY a.nickname)
                                   FROM group_members gm JOIN agents a ON a.id = gm.agent_id WHERE gm.group_id = g.id), '[]') AS members
                        FROM groups g`;

export async function listGroups(ds: DataSource | EntityManager, workspaceId: string): Promise<GroupRecord[]> {
  const rows = await ds.query(`${GROUP_SELECT} WHERE g.workspace_id = $1 ORDER BY g.system DESC, array_position(ARRAY['Public','Trader','Admin'], g.name), g.created_at ASC, g.name ASC`, [workspaceId]);
  return rows.map(rowToGroup);
}

export async function getGroup(m: DataSource | EntityManager, workspaceId: string, groupId: string, lock = false): Promise<GroupRecord> {
  const rows = UUID_RE.test(groupId)
    ? await m.query(`${GROUP_SELECT} WHERE g.workspace_id = $1 AND g.id = $2::uuid${lock ? ' FOR UPDATE OF g' : ''}`, [workspaceId, groupId])
    : [];
  if (!rows.length) throw new ApiError('not_found', `Group "${groupId}" was not found in this workspace.`);
  return rowToGroup(rows[0]);
}

/** 403 when a change touches a capability the caller does not hold (spec §5.4). */
function refuseUnheld(held: ReadonlySet<Capability>, before: readonly string[], after: readonly string[], what: string): void {
  const missing = capabilityChangeNotHeld(held, before, after);
  if (missing.length) {
    throw new ApiError('not_authorized', `You cannot ${what} the ${missing.join(', ')} capabilit${missing.length > 1 ? 'ies' : 'y'}: you do not hold ${missing.length > 1 ? 'them' : 'it'} in this workspace.`, {
      requiredCapabilities: missing,
    });
  }
}

export interface GroupInput {
  name?: string;
  capabilities?: Capability[];
  metricPermissions?: MetricPermissions;
  sourcePermissions?: SourcePermissions;
  members?: string[];
}

async function withUniqueName<T>(m: EntityManager, name: string, fn: () => Promise<T>): Promise<T> {
  await m.query('SAVEPOINT group_name');
  try {
    const out = await fn();
    await m.query('RELEASE SAVEPOINT group_name');
    return out;
  } catch (err) {
    if (pgCode(err) === '23505') {
      await m.query('ROLLBACK TO SAVEPOINT group_name');
      throw new ApiError('conflict', `A group named "${name}" already exists in this workspace.`);
    }
    throw err;
  }
}

async function insertMember(m: EntityManager, workspaceId: string, groupId: string, agentId: string): Promise<void> {
  const exists = await m.query(`SELECT 1 FROM agents WHERE id = $1`, [agentId]);
  if (!exists.length) throw new ApiError('not_found', `Participant "${agentId}" was not found.`);
  await m.query(`INSERT INTO memberships (workspace_id, agent_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [workspaceId, agentId]);
  await m.query(`INSERT INTO group_members (group_id, agent_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [groupId, agentId]);
}

/** POST /groups: a custom group; its capabilities must all be held by the caller. */
export async function createGroup(ds: DataSource, workspaceId: string, held: ReadonlySet<Capability>, input: GroupInput & { name: string }): Promise<GroupRecord> {
  const caps = [...new Set(input.capabilities ?? [])];
  refuseUnheld(held, [], caps, 'grant');
  return inTransaction(ds, async (m) => {
    const [row] = await withUniqueName(m, input.name, () =>
      m.query(
        `INSERT INTO groups (workspace_id, name, system, capabilities, metric_permissions, source_permissions)
         VALUES ($1, $2, false, $3, $4, $5) RETURNING id`,
        [workspaceId, input.name, caps, JSON.stringify(input.metricPermissions ?? {}), JSON.stringify(input.sourcePermissions ?? {})],
      ),
    );
    for (const agentId of new Set(input.members ?? [])) await insertMember(m, workspaceId, row.id, agentId);
    return getGroup(m, workspaceId, row.id);
  });
}

/** PUT /groups/{id}: fields sent replace the stored ones; system group names are fixed. */
export async function updateGroup(ds: DataSource, workspaceId: string, groupId: string, held: ReadonlySet<Capability>, input: GroupInput): Promise<GroupRecord> {
  return inTransaction(ds, async (m) => {
    const g = await getGroup(m, workspaceId, groupId, true);
    if (input.name !== undefined && input.name !== g.name && g.system) {
      throw new ApiError('conflict', `"${g.name}" is a system group: its name cannot be changed.`);
    }
    const caps = input.capabilities ? [...new Set(input.capabilities)] : g.capabilities;
    refuseUnheld(held, g.capabilities, caps, 'grant or remove');
    await withUniqueName(m, input.name ?? g.name, () =>
      m.query(`UPDATE groups SET name = $2, capabilities = $3, metric_permissions = $4, source_permissions = $5 WHERE id = $1`, [
        g.id,
        input.name ?? g.name,
        caps,
        JSON.stringify(input.metricPermissions ?? g.metricPermissions),
        JSON.stringify(input.sourcePermissions ?? g.sourcePermissions),
      ]),
    );
    return getGroup(m, workspaceId, g.id);
  });
}

/** DELETE /groups/{id}: custom groups only; stripping capabilities the caller lacks is refused. */
export async function deleteGroup(ds: DataSource, workspaceId: string, groupId: string, held: ReadonlySet<Capability>): Promise<void> {
  await inTransaction(ds, async (m) => {
    const g = await getGroup(m, workspaceId, groupId, true);
    if (g.system) throw new ApiError('conflict', `"${g.name}" is a system group: it cannot be deleted.`);
    if (g.members.length) refuseUnheld(held, g.capabilities, [], 'remove');
    await m.query(`DELETE FROM groups WHERE id = $1`, [g.id]);
  });
}

/** Adding a participant to a group grants it the group's capabilities: the caller must hold them all. */
export async function addGroupMember(ds: DataSource, workspaceId: string, groupId: string, agentId: string, held: ReadonlySet<Capability>): Promise<GroupRecord> {
  return inTransaction(ds, async (m) => {
    const g = await getGroup(m, workspaceId, groupId, true);
    refuseUnheld(held, [], g.capabilities, 'grant');
    await insertMember(m, workspaceId, g.id, agentId);
    return getGroup(m, workspaceId, g.id);
  });
}

/** Removing a participant takes the group's capabilities away: the caller must hold them all. */
export async function removeGroupMember(ds: DataSource, workspaceId: string, groupId: string, agentId: string, held: ReadonlySet<Capability>): Promise<GroupRecord> {
  return inTransaction(ds, async (m) => {
    const g = await getGroup(m, workspaceId, groupId, true);
    if (!g.members.some((x) => x.id === agentId)) throw new ApiError('not_found', `Participant "${agentId}" is not a member of group "${g.name}".`);
    refuseUnheld(held, g.capabilities, [], 'remove');
    await m.query(`DELETE FROM group_members WHERE group_id = $1 AND agent_id = $2`, [g.id, agentId]);
    return getGroup(m, workspaceId, g.id);
  });
}

/** Group ids of a workspace with their capabilities, for membership grants (POST /agents). */
export async function groupsByIds(m: EntityManager, workspaceId: string, ids: readonly string[]): Promise<Array<{ id: string; name: string; capabilities: string[] }>> {
  const bad = ids.filter((id) => !UUID_RE.test(id));
  if (bad.length) throw new ApiError('not_found', `Group "${bad[0]}" was not found in workspace ${workspaceId}.`);
  const rows: Array<{ id: string; name: string; capabilities: string[] }> = await m.query(
    `SELECT id, name, capabilities FROM groups WHERE workspace_id = $1 AND id = ANY($2::uuid[])`,
    [workspaceId, ids],
  );
  const missing = ids.find((id) => !rows.some((r) => r.id === id));
  if (missing) throw new ApiError('not_found', `Group "${missing}" was not found in workspace ${workspaceId}.`);
  return rows;
}

import { In, type DataSource, type EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { inTransaction, pgCode } from '../../db/tx';
import type { Deps } from '../../deps';
import { type Capability, type PermissionGrant } from '../../domain/capabilities';
import { Agent } from '../../entities/agent';
import { Group, GroupMember, type MetricPermissions, type SourcePermissions, type Workspace } from '../../entities/workspace';
import { deleteGroupRow, insertGroup, joinGroup, leaveGroup, updateGroupRow } from '../workspaces';
// The policy's rule (policies/groups), asked inside the write's transaction: the group's capabilities are read there, locked.
import { requireHeldChange } from './policies/groups';

export type { MetricPermissions, SourcePermissions };

/** A group with its members (id and nickname, by nickname). */
export type GroupRecord = Group & { members: Array<{ id: string; nickname: string }> };

export const PUBLIC_GROUP = 'Public';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The groups whose grants apply to a caller in a workspace (spec §2.10, §5.3, §5.4): the groups it
 * is a member of, plus the Public group, which applies implicitly to every member and, in a public
 * workspace or through a view link, to everyone. Through publicness or a view link the Public
 * group always grants read.
 */
export async function grantsInWorkspace(
  deps: Deps,
  ws: Pick<Workspace, 'id' | 'public'>,
  agentId: string | null,
  viewLink: boolean,
): Promise<PermissionGrant[]> {
  return (await grantsInWorkspaces(deps, [ws], agentId, viewLink)).get(ws.id) ?? [];
}

/**
 * grantsInWorkspace for many workspaces in one statement (a feed or a profile judges every workspace
 * the caller belongs to: one query each grew with their number, issue 60).
 */
export async function grantsInWorkspaces(
  deps: Deps,
  wss: ReadonlyArray<Pick<Workspace, 'id' | 'public'>>,
  agentId: string | null,
  viewLink: boolean,
): Promise<Map<string, PermissionGrant[]>> {
  const out = new Map<string, PermissionGrant[]>(wss.map((w) => [w.id, []]));
  if (!wss.length) return out;
  const rows: Array<{
    workspace_id: string;
    name: string;
    system: boolean;
    capabilities: string[];
    metric_permissions: MetricPermissions;
    source_permissions: SourcePermissions;
    in_group: boolean;
    is_member: boolean;
  }> = await deps.ds.query(
    `SELECT g.workspace_id, g.name, g.system, g.capabilities, g.metric_permissions, g.source_permissions,
            EXISTS (SELECT 1 FROM group_members gm WHERE gm.group_id = g.id AND gm.agent_id = $2) AS in_group,
            EXISTS (SELECT 1 FROM memberships mb WHERE mb.workspace_id = g.workspace_id AND mb.agent_id = $2) AS is_member
       FROM groups g
      WHERE g.workspace_id = ANY($1::uuid[])
        AND (EXISTS (SELECT 1 FROM group_members gm WHERE gm.group_id = g.id AND gm.agent_id = $2)
             OR (g.system AND g.name = $3))
      ORDER BY g.workspace_id, g.id`,
    [wss.map((w) => w.id), agentId, PUBLIC_GROUP],
  );
  const publicOf = new Map(wss.map((w) => [w.id, w.public]));
  for (const r of rows) {
    const isPublic = r.system && r.name === PUBLIC_GROUP;
    const seesPublic = !!publicOf.get(r.workspace_id) || viewLink;
    if (isPublic && !r.in_group && !r.is_member && !seesPublic) continue;
    const caps = isPublic && seesPublic && !r.capabilities.includes('read') ? [...r.capabilities, 'read'] : r.capabilities;
    out.get(r.workspace_id)?.push({ capabilities: caps, metricPermissions: r.metric_permissions, sourcePermissions: r.source_permissions, ...(isPublic && !r.in_group ? { implicit: true } : {}) });
  }
  return out;
}

/** The groups with their members, loaded in one query, ordered by nickname. */
async function withMembers(m: DataSource | EntityManager, groups: Group[]): Promise<GroupRecord[]> {
  const members = groups.length
    ? await m
        .getRepository(GroupMember)
        .createQueryBuilder('gm')
        .innerJoin('gm.agent', 'a')
        .select(['gm.groupId', 'gm.agentId', 'a.id', 'a.nickname'])
        .where('gm.groupId IN (:...ids)', { ids: groups.map((g) => g.id) })
        .orderBy('a.nickname')
        .getMany()
    : [];
  return groups.map((g) =>
    Object.assign(g, { members: members.filter((gm) => gm.groupId === g.id).map((gm) => ({ id: gm.agent!.id, nickname: gm.agent!.nickname })) }),
  );
}

export async function groupsOfWorkspace(deps: Deps, workspaceId: string): Promise<GroupRecord[]> {
  const groups = await deps.ds
    .getRepository(Group)
    .createQueryBuilder('g')
    .where('g.workspaceId = :workspaceId', { workspaceId })
    .orderBy('g.system', 'DESC')
    .addOrderBy(`array_position(ARRAY['Public','Trader','Admin'], g.name)`)
    .addOrderBy('g.createdAt', 'ASC')
    .addOrderBy('g.name', 'ASC')
    .getMany();
  return withMembers(deps.ds, groups);
}

export async function getGroup(m: DataSource | EntityManager, workspaceId: string, groupId: string, lock = false): Promise<GroupRecord> {
  const group = UUID_RE.test(groupId)
    ? await m.getRepository(Group).findOne({ where: { workspaceId, id: groupId }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) })
    : null;
  if (!group) throw new DomainError('not_found', `Group "${groupId}" was not found in this workspace.`);
  const [record] = await withMembers(m, [group]);
  return record;
}

/** One group of the workspace with its members (getGroup is the step writes reuse inside their transaction, locked). */
export async function groupOfWorkspace(deps: Deps, workspaceId: string, groupId: string): ReturnType<typeof getGroup> {
  return getGroup(deps.ds, workspaceId, groupId);
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
      throw new DomainError('conflict', `A group named "${name}" already exists in this workspace.`);
    }
    throw err;
  }
}

/** Adds a participant named by id or nickname (an owner invites people by the name they see). */
async function insertMember(m: EntityManager, workspaceId: string, groupId: string, idOrNickname: string): Promise<void> {
  const repo = m.getRepository(Agent);
  const agent =
    (await repo.findOne({ select: { id: true }, where: { id: idOrNickname } })) ??
    (await repo.createQueryBuilder('a').select(['a.id']).where('lower(a.nickname) = lower(:x)', { x: idOrNickname }).getOne());
  if (!agent) throw new DomainError('not_found', `Participant "${idOrNickname}" was not found.`);
  await joinGroup(m, workspaceId, groupId, agent.id);
}

/** POST /groups: a custom group; its capabilities must all be held by the caller. */
export async function addWorkspaceGroup(deps: Deps, workspaceId: string, held: ReadonlySet<Capability>, input: GroupInput & { name: string }): Promise<GroupRecord> {
  const caps = [...new Set(input.capabilities ?? [])];
  requireHeldChange(held, [], caps, 'grant');
  return inTransaction(deps.ds, async (m) => {
    const group = m.create(Group, {
      workspaceId,
      name: input.name,
      system: false,
      capabilities: caps,
      metricPermissions: input.metricPermissions ?? {},
      sourcePermissions: input.sourcePermissions ?? {},
    });
    await withUniqueName(m, input.name, () => insertGroup(m, group));
    for (const agentId of new Set(input.members ?? [])) await insertMember(m, workspaceId, group.id, agentId);
    return getGroup(m, workspaceId, group.id);
  });
}

/** PUT /groups/{id}: fields sent replace the stored ones; system group names are fixed. */
export async function editWorkspaceGroup(deps: Deps, workspaceId: string, groupId: string, held: ReadonlySet<Capability>, input: GroupInput): Promise<GroupRecord> {
  return inTransaction(deps.ds, async (m) => {
    const g = await getGroup(m, workspaceId, groupId, true);
    if (input.name !== undefined && input.name !== g.name && g.system) {
      throw new DomainError('conflict', `"${g.name}" is a system group: its name cannot be changed.`);
    }
    const caps = input.capabilities ? [...new Set(input.capabilities)] : g.capabilities;
    requireHeldChange(held, g.capabilities, caps, 'grant or remove');
    await withUniqueName(m, input.name ?? g.name, () =>
      updateGroupRow(m, g.id, {
          name: input.name ?? g.name,
          capabilities: caps,
          metricPermissions: input.metricPermissions ?? g.metricPermissions,
          sourcePermissions: input.sourcePermissions ?? g.sourcePermissions,
      }),
    );
    return getGroup(m, workspaceId, g.id);
  });
}

/** DELETE /groups/{id}: custom groups only; stripping capabilities the caller lacks is refused. */
export async function removeWorkspaceGroup(deps: Deps, workspaceId: string, groupId: string, held: ReadonlySet<Capability>): Promise<void> {
  await inTransaction(deps.ds, async (m) => {
    const g = await getGroup(m, workspaceId, groupId, true);
    if (g.system) throw new DomainError('conflict', `"${g.name}" is a system group: it cannot be deleted.`);
    if (g.members.length) requireHeldChange(held, g.capabilities, [], 'remove');
    await deleteGroupRow(m, g.id);
  });
}

/** Adding a participant to a group grants it the group's capabilities: the caller must hold them all. */
export async function putInGroup(deps: Deps, workspaceId: string, groupId: string, agentId: string, held: ReadonlySet<Capability>): Promise<GroupRecord> {
  return inTransaction(deps.ds, async (m) => {
    const g = await getGroup(m, workspaceId, groupId, true);
    requireHeldChange(held, [], g.capabilities, 'grant');
    await insertMember(m, workspaceId, g.id, agentId);
    return getGroup(m, workspaceId, g.id);
  });
}

/** Removing a participant takes the group's capabilities away: the caller must hold them all. */
export async function takeOutOfGroup(deps: Deps, workspaceId: string, groupId: string, agentId: string, held: ReadonlySet<Capability>): Promise<GroupRecord> {
  return inTransaction(deps.ds, async (m) => {
    const g = await getGroup(m, workspaceId, groupId, true);
    if (!g.members.some((x) => x.id === agentId)) throw new DomainError('not_found', `Participant "${agentId}" is not a member of group "${g.name}".`);
    requireHeldChange(held, g.capabilities, [], 'remove');
    await leaveGroup(m, g.id, agentId);
    return getGroup(m, workspaceId, g.id);
  });
}

/** Group ids of a workspace with their capabilities, for membership grants (POST /agents). */
export async function groupsByIds(m: EntityManager, workspaceId: string, ids: readonly string[]): Promise<Array<{ id: string; name: string; capabilities: string[] }>> {
  const bad = ids.filter((id) => !UUID_RE.test(id));
  if (bad.length) throw new DomainError('not_found', `Group "${bad[0]}" was not found in workspace ${workspaceId}.`);
  if (!ids.length) return [];
  const rows = await m.getRepository(Group).find({ select: { id: true, name: true, capabilities: true }, where: { workspaceId, id: In([...ids]) } });
  const missing = ids.find((id) => !rows.some((r) => r.id === id));
  if (missing) throw new DomainError('not_found', `Group "${missing}" was not found in workspace ${workspaceId}.`);
  return rows;
}

import { z } from 'zod';
import { CAPABILITIES } from '../../domain/capabilities';
import { policies } from '../../services/access';
import {
  addWorkspaceGroup,
  editWorkspaceGroup,
  groupOfWorkspace,
  groupsOfWorkspace,
  putInGroup,
  removeWorkspaceGroup,
  takeOutOfGroup,
  type GroupRecord,
} from '../../services/access';
import type { WorkspaceAccess } from '../access';
import { groupSchema } from '../schemas/workspaces';
import { defineRoute } from '../registry';
import { idParam } from '../schemas/common';

const MAX_ENTRIES = 1000;
const entryId = z.string().min(1).max(200);
const capabilities = z.array(z.enum(CAPABILITIES, { error: `must be one of ${CAPABILITIES.join(', ')}` })).max(CAPABILITIES.length * 2);
const metricPermissions = z
  .record(entryId, z.strictObject({ read: z.boolean().optional(), trade: z.boolean().optional() }))
  .refine((r) => Object.keys(r).length <= MAX_ENTRIES, `must have at most ${MAX_ENTRIES} entries`);
const sourcePermissions = z
  .record(entryId, z.strictObject({ read: z.boolean().optional() }))
  .refine((r) => Object.keys(r).length <= MAX_ENTRIES, `must have at most ${MAX_ENTRIES} entries`);
const groupName = z.string().trim().min(1, 'is required').max(60, 'must be at most 60 characters');
const groupFields = { capabilities, metricPermissions: metricPermissions.optional(), sourcePermissions: sourcePermissions.optional() };
const memberParams = z.object({ id: z.string().min(1).max(200), agentId: z.string().min(1).max(200) });

/** Member lists are shown to holders of manage; readers see the count. */
/** A reader without manage sees the group's permission entries only for the metrics and sources it may read (an entry names its metric). */
function presentGroup(g: GroupRecord, a: Pick<WorkspaceAccess, 'caps' | 'metricReadable' | 'sourceReadable'>) {
  const withMembers = a.caps.has('manage');
  const only = <V>(entries: Record<string, V> | null | undefined, readable: (id: string) => boolean) =>
    entries && !withMembers ? Object.fromEntries(Object.entries(entries).filter(([id]) => readable(id))) : entries;
  return {
    id: g.id,
    name: g.name,
    system: g.system,
    capabilities: g.capabilities,
    metricPermissions: only(g.metricPermissions, a.metricReadable),
    sourcePermissions: only(g.sourcePermissions, a.sourceReadable),
    memberCount: g.members.length,
    ...(withMembers ? { members: g.members } : {}),
    createdAt: g.createdAt.toISOString(),
  };
}

export const getGroups = defineRoute({
  method: 'GET',
  path: '/groups',
  response: z.array(groupSchema),
  errors: [],
  auth: policies.groups.list,
  summary: "The workspace's permission groups: capabilities, per-metric {read, trade} and per-source {read} permissions; members for holders of manage. Always needs an identity.",
  handler: async (c) => {
    const a = c.workspace();
    return (await groupsOfWorkspace(c.deps, a.workspace.id)).map((g) => presentGroup(g, a));
  },
});

export const getGroupsById = defineRoute({
  method: 'GET',
  path: '/groups/:id',
  response: groupSchema,
  errors: ['not_found'],
  auth: policies.groups.read,
  summary: 'One permission group.',
  params: idParam,
  handler: async (c) => {
    const a = c.workspace();
    return presentGroup(await groupOfWorkspace(c.deps, a.workspace.id, c.params.id), a);
  },
});

export const postGroups = defineRoute({
  method: 'POST',
  path: '/groups',
  response: groupSchema,
  successStatus: 201,
  errors: ['conflict', 'not_found'],
  auth: policies.groups.create,
  summary:
    'Create a group { name, capabilities, metricPermissions?, sourcePermissions?, members?: [agentId] }. Nobody grants a capability it does not hold; manage_workspace only by a holder. 409 on a taken name.',
  body: z.strictObject({ name: groupName, ...groupFields, members: z.array(z.string().min(1).max(200)).max(500).optional() }),
  handler: async (c) => {
    const a = c.workspace();
    const g = await addWorkspaceGroup(c.deps, a.workspace.id, a.caps, c.body);
    c.status(201);
    return presentGroup(g, a);
  },
});

export const putGroupsById = defineRoute({
  method: 'PUT',
  path: '/groups/:id',
  response: groupSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.groups.set,
  summary: 'Update a group { name?, capabilities?, metricPermissions?, sourcePermissions? }; fields sent replace the stored ones. System group names (Public, Trader, Admin) are fixed.',
  params: idParam,
  body: z.strictObject({ name: groupName.optional(), capabilities: capabilities.optional(), metricPermissions: metricPermissions.optional(), sourcePermissions: sourcePermissions.optional() }),
  handler: async (c) => {
    const a = c.workspace();
    return presentGroup(await editWorkspaceGroup(c.deps, a.workspace.id, c.params.id, a.caps, c.body), a);
  },
});

export const deleteGroupsById = defineRoute({
  method: 'DELETE',
  path: '/groups/:id',
  errors: ['not_found', 'conflict'],
  auth: policies.groups.remove,
  summary: 'Delete a custom group (204); system groups cannot be deleted (409).',
  params: idParam,
  handler: async (c) => {
    const a = c.workspace();
    await removeWorkspaceGroup(c.deps, a.workspace.id, c.params.id, a.caps);
  },
});

export const postGroupsByIdMembers = defineRoute({
  method: 'POST',
  path: '/groups/:id/members',
  response: groupSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.groups.addMember,
  summary: "Add a participant { agentId (id or nickname) } to a group (and to the workspace); the caller must hold every capability the group grants.",
  params: idParam,
  body: z.strictObject({ agentId: z.string().min(1).max(200) }),
  handler: async (c) => {
    const a = c.workspace();
    return presentGroup(await putInGroup(c.deps, a.workspace.id, c.params.id, c.body.agentId, a.caps), a);
  },
});

export const deleteGroupsByIdMembersByAgentId = defineRoute({
  method: 'DELETE',
  path: '/groups/:id/members/:agentId',
  response: groupSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.groups.removeMember,
  summary: 'Remove a participant from a group; the caller must hold every capability the group grants. The workspace membership stays.',
  params: memberParams,
  handler: async (c) => {
    const a = c.workspace();
    return presentGroup(await takeOutOfGroup(c.deps, a.workspace.id, c.params.id, c.params.agentId, a.caps), a);
  },
});

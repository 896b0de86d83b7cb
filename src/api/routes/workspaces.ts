import { z } from 'zod';
import { shareViewLink, unshareViewLink, policies } from '../../services/access';
import { metricsOfWorkspace } from '../../services/metrics';
import { requestWorkspaceDeletion } from '../../services/deletions';
import { editWorkspaceSettings, OWNER_SETTINGS } from '../../services/workspaces';
import { joinPublicWorkspace, removeMember, SLUG_RE, workspacesOf } from '../../services/workspaces';
import { publicWorkspaces } from '../../services/standings';
import { openWorkspace, TEMPLATE_IDS } from '../../services/templates';
import { presentMetric } from '../presenters/metric';
import { presentActivity, presentWorkspace } from '../presenters/workspace';
import { presentDeletion } from '../presenters/deletion';
import { deletionSchema } from '../schemas/deletions';
import { currentWorkspaceSchema, joinSchema, myWorkspaceSchema, publicWorkspaceSchema, viewLinkSchema, workspaceSchema } from '../schemas/workspaces';
import { defineRoute } from '../registry';
import { credits } from '../schemas/common';

export const postWorkspaces = defineRoute({
  method: 'POST',
  path: '/workspaces',
  response: workspaceSchema.extend({
    template: z.string().nullable().describe('The template applied (null: none).'),
    metricsCreated: z.number().int(),
    starterProposalId: z.string().nullable(),
  }),
  successStatus: 201,
  errors: ['conflict'],
  auth: policies.workspaces.create,
  summary: `Create a workspace; the creator holds every capability. Public, Trader and Admin groups are created with it. template? (${TEMPLATE_IDS.join(', ')}: GET /onboard/templates) and templateParams? ({ values: { <metric name>: number }, starterProposal: boolean }) apply a template as POST /onboard does, in the same transaction.`,
  body: z.object({
    name: z.string().trim().min(1, 'is required').max(120),
    description: z.string().max(2000).optional(),
    public: z.boolean().optional(),
    slug: z.string().regex(SLUG_RE, 'must be lowercase letters, digits and -, 1 to 64 characters').optional(),
    externalProposals: z.boolean().optional(),
    defaultLiquidityCredits: credits.optional(),
    defaultProposalLiquidityCredits: credits.optional(),
    template: z.string().trim().min(1, 'must not be blank').max(64).optional(),
    templateParams: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  }),
  handler: async (c) => {
    const caller = c.identity();
    const ws = await openWorkspace(c.deps, caller.agentId, c.body);
    c.status(201);
    return { ...presentWorkspace(ws), template: ws.template, metricsCreated: ws.metricsCreated, starterProposalId: ws.starterProposalId };
  },
});

export const getWorkspacesCurrent = defineRoute({
  method: 'GET',
  path: '/workspaces/current',
  response: currentWorkspaceSchema,
  errors: [],
  auth: policies.workspaces.readCurrent,
  summary: 'The workspace the request resolves to (X-Workspace-Id, else the key default, else the highest-priority membership), with metrics.',
  handler: async (c) => {
    const access = c.workspace();
    const metrics = (await metricsOfWorkspace(c.deps, access.workspace.id)).filter((m) => access.metricReadable(m.id));
    return { ...presentWorkspace(access.workspace, metrics.map(presentMetric)), capabilities: [...access.caps] };
  },
});

export const getMarketplaceWorkspacesPublic = defineRoute({
  method: 'GET',
  path: '/marketplace/workspaces/public',
  response: z.array(publicWorkspaceSchema),
  errors: [],
  // Anyone may list them (issue 59: the home page lists them to a visitor not signed in); a public workspace is readable by anyone anyway.
  auth: policies.workspaces.listPublic,
  summary:
    'Public workspaces, most active first (traded volume, then open proposals, then metrics, then the oldest), each with its activity { metrics, openProposals, openBooks, volume (credits traded), lastTradeAt }. Query q keeps those whose name or slug contains it. At most 500.',
  query: z.object({ q: z.string().max(120, 'must be at most 120 characters').optional() }),
  handler: async (c) => (await publicWorkspaces(c.deps, { q: c.query.q })).map((w) => ({ ...presentWorkspace(w.workspace), activity: presentActivity(w.activity) })),
});

export const postMarketplaceByWorkspaceIdJoin = defineRoute({
  method: 'POST',
  path: '/marketplace/:workspaceId/join',
  response: joinSchema,
  errors: ['workspace_not_found', 'conflict'],
  auth: policies.workspaces.join,
  summary: 'Join a public workspace as a Trader (read, trade).',
  params: z.object({ workspaceId: z.string().min(1).max(200) }),
  handler: async (c) => {
    const caller = c.identity();
    const ws = await joinPublicWorkspace(c.deps, caller.agentId, c.params.workspaceId, policies.workspaces.requireJoinable);
    return { ok: true, workspaceId: ws.id, slug: ws.slug, group: 'Trader' };
  },
});

export const deleteWorkspacesCurrentMembersByAgentId = defineRoute({
  method: 'DELETE',
  path: '/workspaces/current/members/:agentId',
  response: z.object({ ok: z.literal(true), workspaceId: z.string(), agentId: z.string() }),
  errors: ['not_found', 'conflict', 'not_authorized'],
  auth: policies.workspaces.removeMember,
  summary:
    'Remove a member from the workspace: its groups there and its membership go; its positions, orders and history stay its own. The caller needs manage and every capability the member\'s groups grant; the owner cannot be removed (409).',
  params: z.object({ agentId: z.string().min(1).max(200) }),
  handler: async (c) => {
    const a = c.workspace();
    await removeMember(c.deps, a.workspace, c.params.agentId, (caps) => policies.workspaces.requireMayRemoveMember(a.caps, caps));
    return { ok: true as const, workspaceId: a.workspace.id, agentId: c.params.agentId };
  },
});

// ---- settings, deletion, view links (access control, spec §5.3, §5.4) ----


const workspaceParam = z.object({ id: z.string().min(1).max(200) });

export const patchWorkspacesById = defineRoute({
  method: 'PATCH',
  path: '/workspaces/:id',
  response: workspaceSchema,
  errors: ['conflict'],
  auth: policies.workspaces.edit,
  summary:
    'Edit workspace settings { name?, description? (manage); public? or visibility?, externalProposals?, defaultLiquidityCredits?, defaultProposalLiquidityCredits? (manage_workspace) }.',
  params: workspaceParam,
  body: z
    .strictObject({
      name: z.string().trim().min(1, 'is required').max(120).optional(),
      description: z.string().max(2000).optional(),
      public: z.boolean().optional(),
      visibility: z.enum(['public', 'private'], { error: 'must be public or private' }).optional(),
      externalProposals: z.boolean().optional(),
      defaultLiquidityCredits: credits.optional(),
      defaultProposalLiquidityCredits: credits.optional(),
    })
    .refine((b) => b.visibility === undefined || b.public === undefined || b.public === (b.visibility === 'public'), {
      message: 'public and visibility disagree; send one of them',
    }),
  handler: async (c) => {
    const { visibility, ...rest } = c.body;
    const patch = { ...rest, public: rest.public ?? (visibility === undefined ? undefined : visibility === 'public') };
    if (OWNER_SETTINGS.some((k) => patch[k] !== undefined)) c.require('manage_workspace');
    return presentWorkspace(await editWorkspaceSettings(c.deps, c.workspace().workspace.id, patch));
  },
});

export const deleteWorkspacesById = defineRoute({
  method: 'DELETE',
  path: '/workspaces/:id',
  response: deletionSchema,
  successStatus: 202,
  errors: [],
  auth: policies.workspaces.remove,
  summary:
    'Delete the workspace: 202 with the deletion (GET its statusUrl for the progress). From this answer on the workspace is gone for every request (404); a job then refunds every open book and deletes its markets, proposals, metrics, groups, memberships and view links in short batches.',
  params: workspaceParam,
  handler: async (c) => {
    c.status(202);
    return presentDeletion(await requestWorkspaceDeletion(c.deps, c.workspace().workspace.id, c.identity().agentId));
  },
});

export const getWorkspacesByIdViewLink = defineRoute({
  method: 'GET',
  path: '/workspaces/:id/view-link',
  response: viewLinkSchema,
  errors: [],
  auth: policies.workspaces.readViewLink,
  summary: "The workspace's view link, minted on first call: { token, url, workspaceId, createdAt }. Header X-View-Link: <token> grants read on this workspace only, with no key.",
  params: workspaceParam,
  handler: async (c) => {
    const ws = c.workspace().workspace;
    const link = await shareViewLink(c.deps, ws.id, c.identity().agentId);
    return { ...link, url: `${c.deps.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/w/${ws.slug}?view=${link.token}`, header: 'X-View-Link' };
  },
});

export const deleteWorkspacesByIdViewLink = defineRoute({
  method: 'DELETE',
  path: '/workspaces/:id/view-link',
  errors: [],
  auth: policies.workspaces.removeViewLink,
  summary: 'Revoke the view link (204); requests carrying it lose read at once. The next GET mints a new token.',
  params: workspaceParam,
  handler: async (c) => {
    await unshareViewLink(c.deps, c.workspace().workspace.id);
  },
});

export const getWorkspaces = defineRoute({
  method: 'GET',
  path: '/workspaces',
  response: z.array(myWorkspaceSchema),
  errors: [],
  auth: policies.workspaces.list,
  summary: "The caller's workspaces: [{ id, name, slug, role (owner, admin or member), visibility (public or private) }], owned first. A key locked to a workspace sees that one.",
  handler: async (c) => {
    const me = c.identity();
    return workspacesOf(c.deps, me.agentId, me.keyLocked ? me.keyWorkspaceId : null);
  },
});

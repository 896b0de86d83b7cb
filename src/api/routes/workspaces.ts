import { z } from 'zod';
import { ApiError } from '../../errors';
import { inTransaction } from '../../db/tx';
import { getOrCreateViewLink, revokeViewLink } from '../../services/access';
import { deleteWorkspace, OWNER_SETTINGS, updateWorkspace } from '../../services/workspaces';
import { addMember, createWorkspace, findWorkspace, listPublicWorkspaces, SLUG_RE } from '../../services/workspaces';
import { auth } from '../auth';
import { presentWorkspace } from '../presenters/workspace';
import { defineRoute } from '../registry';
import { credits } from '../schemas/common';

/** Later areas (metrics) fill a workspace's metrics array without this module knowing them. */
export const workspaceMetricsHook: { list?: (ds: import('typeorm').DataSource, workspaceId: string) => Promise<unknown[]> } = {};

defineRoute({
  method: 'POST',
  path: '/workspaces',
  auth: auth.identity('account:write'),
  summary: 'Create a workspace; the creator holds every capability. Public, Trader and Admin groups are created with it.',
  body: z.object({
    name: z.string().trim().min(1, 'is required').max(120),
    description: z.string().max(2000).optional(),
    public: z.boolean().optional(),
    slug: z.string().regex(SLUG_RE, 'must be lowercase letters, digits and -, 1 to 64 characters').optional(),
    externalProposals: z.boolean().optional(),
    defaultLiquidityCredits: credits.optional(),
    defaultProposalLiquidityCredits: credits.optional(),
  }),
  handler: async (c) => {
    const caller = c.identity();
    const ws = await inTransaction(c.deps.ds, (m) => createWorkspace(m, caller.agentId, c.body));
    c.status(201);
    return presentWorkspace(ws);
  },
});

defineRoute({
  method: 'GET',
  path: '/workspaces/current',
  auth: auth.publicRead(),
  summary: 'The workspace the request resolves to (X-Workspace-Id, else the key default, else the highest-priority membership), with metrics.',
  handler: async (c) => {
    const ws = c.workspace().workspace;
    return { ...presentWorkspace(ws, (await workspaceMetricsHook.list?.(c.deps.ds, ws.id)) ?? []), capabilities: [...c.workspace().caps] };
  },
});

defineRoute({
  method: 'GET',
  path: '/marketplace/workspaces/public',
  auth: auth.identity(),
  summary: 'Public workspaces.',
  handler: async (c) => (await listPublicWorkspaces(c.deps.ds)).map((w) => presentWorkspace(w)),
});

defineRoute({
  method: 'POST',
  path: '/marketplace/:workspaceId/join',
  auth: auth.identity(),
  summary: 'Join a public workspace as a Trader (read, trade).',
  params: z.object({ workspaceId: z.string().min(1).max(200) }),
  handler: async (c) => {
    const caller = c.identity();
    const ws = await findWorkspace(c.deps.ds, c.params.workspaceId);
    if (!ws) throw new ApiError('workspace_not_found', `No workspace "${c.params.workspaceId}" exists.`);
    if (!ws.public) throw new ApiError('not_authorized', 'This workspace is private: only its admins can add members.', { requiredCapabilities: ['manage'] });
    await inTransaction(c.deps.ds, (m) => addMember(m, ws.id, caller.agentId, 'Trader'));
    return { ok: true, workspaceId: ws.id, slug: ws.slug, group: 'Trader' };
  },
});

// ---- settings, deletion, view links (access control, spec §5.3, §5.4) ----


const workspaceParam = z.object({ id: z.string().min(1).max(200) });

defineRoute({
  method: 'PATCH',
  path: '/workspaces/:id',
  auth: { ...auth.manage(), workspaceParam: 'id' },
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
    return presentWorkspace(await updateWorkspace(c.deps.ds, c.workspace().workspace.id, patch));
  },
});

defineRoute({
  method: 'DELETE',
  path: '/workspaces/:id',
  auth: { ...auth.manageWorkspace(), workspaceParam: 'id' },
  summary: 'Delete the workspace (204): every open book is refunded first, then its metrics, groups, memberships and view links go.',
  params: workspaceParam,
  handler: async (c) => {
    await deleteWorkspace(c.deps.ds, c.workspace().workspace.id, c.deps.clock.now());
  },
});

defineRoute({
  method: 'GET',
  path: '/workspaces/:id/view-link',
  auth: { ...auth.manage(), workspaceParam: 'id' },
  summary: "The workspace's view link, minted on first call: { token, url, workspaceId, createdAt }. Header X-View-Link: <token> grants read on this workspace only, with no key.",
  params: workspaceParam,
  handler: async (c) => {
    const ws = c.workspace().workspace;
    const link = await getOrCreateViewLink(c.deps.ds, ws.id, c.identity().agentId);
    return { ...link, url: `${c.deps.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/w/${ws.slug}?view=${link.token}`, header: 'X-View-Link' };
  },
});

defineRoute({
  method: 'DELETE',
  path: '/workspaces/:id/view-link',
  auth: { ...auth.manage(), workspaceParam: 'id' },
  summary: 'Revoke the view link (204); requests carrying it lose read at once. The next GET mints a new token.',
  params: workspaceParam,
  handler: async (c) => {
    await revokeViewLink(c.deps.ds, c.workspace().workspace.id);
  },
});

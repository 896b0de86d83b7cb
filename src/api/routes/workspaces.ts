import { z } from 'zod';
import { ApiError } from '../../errors';
import { inTransaction } from '../../db/tx';
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

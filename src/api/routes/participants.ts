import { z } from 'zod';
import { DomainError, ERROR_CATALOG } from '../../errors';
import { createChildParticipant, participantsOfCaller, participantsOfWorkspace, removeParticipant } from '../../services/participants';
import { refuseBroaderScopes, policies } from '../../services/access';
import { workspaceByIdOrSlug } from '../../services/workspaces';
import { accessForWorkspace, requireCapability } from '../access';
import { childSchema, myParticipantSchema, removalSchema, workspaceParticipantSchema } from '../schemas/participants';
import { defineRoute } from '../registry';
import { credits, flag, nickname } from '../schemas/common';
import { presentChild, presentMyParticipant, presentRemoval, presentWorkspaceParticipant } from '../presenters/participant';
import { agentIdParam } from './agents';
import { scopeList } from './keys';

const DEFAULT_CHILD_SCOPES = ['workspace:read', 'workspace:trade'];

export const postAgents = defineRoute({
  method: 'POST',
  path: '/agents',
  response: childSchema,
  successStatus: 201,
  errors: ['nickname_taken', 'insufficient_balance', 'conflict', 'not_found', 'not_authorized', 'workspace_not_found'],
  auth: policies.participants.createChild,
  errorStatus: { insufficient_balance: 409 },
  summary:
    'Create a child participant (bot) { agentId, nickname?, bio?, source?, keyLabel?, keyScopes? (default workspace:read, workspace:trade), memberships?: [{ workspaceId, groupIds? (default Trader) }], initialCredits? }. Needs manage in every listed workspace; initialCredits move from your balance in the same transaction (409 and nothing created when short). Returns { agentId, apiKey, keyId, scopes, label, memberships }.',
  body: z
    .strictObject({
      agentId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$/, 'must be 3 to 64 characters of letters, digits, _ or -').optional(),
      nickname: nickname.optional(),
      bio: z.string().max(500, 'must be at most 500 characters').optional(),
      source: z.string().regex(/^[a-z0-9-]{1,32}$/, 'must match [a-z0-9-]{1,32}').optional(),
      keyLabel: z.string().trim().max(100).optional(),
      keyScopes: scopeList.optional(),
      memberships: z
        .array(z.strictObject({ workspaceId: z.string().min(1).max(200), groupIds: z.array(z.string().min(1).max(200)).max(50).optional() }))
        .max(50)
        .optional(),
      initialCredits: credits.optional(),
    })
    .refine((b) => b.agentId ?? b.nickname, { message: 'send agentId (or nickname)' }),
  handler: async (c) => {
    const caller = c.identity();
    const keyScopes = [...new Set(c.body.keyScopes ?? DEFAULT_CHILD_SCOPES)];
    refuseBroaderScopes(caller, keyScopes);
    const out = await createChildParticipant(c.deps, caller, { ...c.body, keyScopes }, async (ws) => {
      const access = await accessForWorkspace(c.deps, caller, ws);
      requireCapability(caller, access, 'manage');
      return access.caps;
    });
    c.status(201);
    return presentChild(out);
  },
});

export const getAgentsMine = defineRoute({
  method: 'GET',
  path: '/agents/mine',
  response: z.array(myParticipantSchema),
  errors: [],
  auth: policies.participants.readMine,
  summary:
    'Participants tied to the caller: its own participant, then the bots it created or claimed. Rows carry earned, settledEarnings, openEarnings, totalTrades, lastTradeAt, earnedAsOf. fresh=1 is accepted and changes nothing.',
  query: z.object({ fresh: flag.meta({ deprecated: true, description: 'Accepted and ignored: earnings are always current.' }) }),
  handler: async (c) => {
    if (c.query.fresh !== undefined) c.deprecate("'fresh' is superseded: earnings are always current; it is ignored.");
    return (await participantsOfCaller(c.deps, c.identity().agentId)).map(presentMyParticipant);
  },
});

export const getAgents = defineRoute({
  method: 'GET',
  path: '/agents',
  response: z.array(workspaceParticipantSchema),
  errors: [],
  auth: policies.participants.list,
  summary: "The workspace's participants with groups, a display role, and realizedPnl, pnlConsensus, pnlMetric.",
  handler: async (c) => (await participantsOfWorkspace(c.deps, c.workspace().workspace)).map(presentWorkspaceParticipant),
});

export const deleteAgentsById = defineRoute({
  method: 'DELETE',
  path: '/agents/:id',
  response: removalSchema,
  successStatus: 202,
  errors: ['not_found', 'conflict', 'not_authorized'],
  auth: policies.participants.remove,
  summary:
    'Delete a participant with its keys, memberships, trades and positions. The participant itself, its creator, or the master key, plus manage in a workspace it belongs to. At once its open orders are cancelled, its balance goes to its parent (else creator, else the treasury) and its keys stop working; a job deletes the rest in short batches. 202 { ok, agentId, creditsReturned, returnedTo, deletion } (GET deletion.statusUrl for the progress).',
  params: agentIdParam,
  handler: async (c) => {
    const caller = c.identity();
    const managesIn = async (workspaceId: string) => {
      const ws = await workspaceByIdOrSlug(c.deps, workspaceId);
      if (!ws) return false;
      try {
        return (await accessForWorkspace(c.deps, caller, ws)).caps.has('manage');
      } catch (err) {
        if (err instanceof DomainError && ERROR_CATALOG[err.code].status === 403) return false;
        throw err;
      }
    };
    const removed = await removeParticipant(c.deps, caller, c.params.id, async (target) => {
      policies.participants.requireMayDelete(caller, target);
      let manages = target.workspaceIds.length === 0;
      for (const wsId of target.workspaceIds) if (!manages && (await managesIn(wsId))) manages = true;
      policies.participants.requireManageToDelete(manages);
    });
    c.status(202);
    return presentRemoval(removed);
  },
});

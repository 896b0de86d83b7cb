import { z } from 'zod';
import { DomainError } from '../../errors';
import { policies } from '../../services/access';
import { participantByIdOrNickname, registerParticipant } from '../../services/participants';
import { isWorkspaceMember } from '../../services/workspaces';
import { limitByAddress } from '../middleware/rateLimit';
import { presentAgent, presentBalance } from '../presenters/agent';
import { agentSchema, balanceSchema, registrationSchema } from '../schemas/participants';
import { defineRoute, type Call } from '../registry';
import { nickname } from '../schemas/common';

const registerBody = z
  .object({
    name: nickname.optional().meta({ deprecated: true, description: "Superseded by 'nickname' (with 'agentId')." }),
    operator: z.string().max(320).nullable().optional().meta({ deprecated: true, description: "Superseded: register with { agentId, nickname, bio }." }),
    agentId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$/, 'must be 3 to 64 characters of letters, digits, _ or -').optional(),
    workspaceId: z.string().min(1).max(200).optional(),
    nickname: nickname.optional(),
    source: z.string().regex(/^[a-z0-9-]{1,32}$/, 'must match [a-z0-9-]{1,32}').optional(),
    bio: z.string().max(500, 'must be at most 500 characters').optional(),
  })
  .refine((b) => b.name ?? b.nickname ?? b.agentId, { message: 'send name (or agentId and nickname)' });

export const postAgentsRegister = defineRoute({
  method: 'POST',
  path: '/agents/register',
  response: registrationSchema,
  successStatus: 201,
  errors: ['nickname_taken', 'workspace_not_found', 'conflict'],
  auth: policies.participants.register,
  summary:
    'Register a participant. Body { agentId, nickname?, bio?, source?, workspaceId? }; the older { name, operator } still works and answers with a Deprecation header. 0 credits; the key (scopes *) is shown once. Rate-limited per client address (429 with Retry-After).',
  body: registerBody,
  handler: async (c) => {
    await limitByAddress(c.deps, c.koa, 'signup');
    const b = c.body;
    if (b.name !== undefined) c.deprecate("'name' is superseded by 'nickname' (with 'agentId'); it still works.");
    if (b.operator !== undefined) c.deprecate("'operator' is superseded: register with { agentId, nickname, bio }; it is still stored.");
    const nick = b.name ?? b.nickname ?? b.agentId!;
    const out = await registerParticipant(c.deps, { agentId: b.agentId, nickname: nick, operator: b.operator, bio: b.bio, source: b.source, workspaceId: b.workspaceId });
    c.status(201);
    return out;
  },
});

export const agentIdParam = z.object({ id: z.string().min(1).max(200) });

/** self/admin: the caller itself, the master key, or manage in a workspace the target belongs to. */
export async function resolveSelfOrAdmin(c: Call<unknown, unknown, { id: string }>) {
  const caller = c.identity();
  const id = c.params.id === 'me' ? caller.agentId : c.params.id;
  const agent = await participantByIdOrNickname(c.deps, id);
  if (!agent || agent.id !== id) throw new DomainError('not_found', `Participant "${id}" was not found.`);
  if (agent.id === caller.agentId || caller.isMaster) return agent;
  policies.participants.requireWorkspaceToTarget(c.access);
  c.require('manage');
  if (!(await isWorkspaceMember(c.deps, c.access.workspace.id, agent.id))) throw new DomainError('not_found', `Participant "${id}" is not a member of this workspace.`);
  return agent;
}

export const getAgentsMe = defineRoute({
  method: 'GET',
  path: '/agents/me',
  response: agentSchema,
  errors: ['invalid_credentials'],
  auth: policies.participants.readMe,
  summary: 'The calling participant.',
  handler: async (c) => {
    const agent = await participantByIdOrNickname(c.deps, c.identity().agentId);
    if (!agent) throw new DomainError('invalid_credentials', 'The participant behind this key no longer exists.');
    return presentAgent(agent);
  },
});

export const getAgentsById = defineRoute({
  method: 'GET',
  path: '/agents/:id',
  response: agentSchema,
  errors: ['not_found'],
  auth: policies.participants.read,
  summary: "Participant info; {id} may be 'me'.",
  params: agentIdParam,
  handler: async (c) => presentAgent(await resolveSelfOrAdmin(c)),
});

export const getAgentsByIdBalance = defineRoute({
  method: 'GET',
  path: '/agents/:id/balance',
  readsPrimary: true,
  response: balanceSchema,
  errors: ['not_found'],
  auth: policies.participants.readBalance,
  summary: "A participant's balance in credits; {id} may be 'me'.",
  params: agentIdParam,
  handler: async (c) => {
    const a = await resolveSelfOrAdmin(c);
    return presentBalance(a);
  },
});

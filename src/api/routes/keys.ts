import { z } from 'zod';
import { SCOPES } from '../../domain/capabilities';
import { editParticipantKey, keysOfParticipant, mintParticipantKey, revokeParticipantKey, policies } from '../../services/access';
import { keyEditSchema, keyRowSchema, mintedKeySchema } from '../schemas/participants';
import { defineRoute } from '../registry';
import { agentIdParam } from './agents';

// lastUsedAt: bumped at most about once a minute per key (services/access/keys.ts touchKeyUsed: an in-process debounce, then one conditional UPDATE).

export const scopeList = z
  .array(z.enum(SCOPES, { error: `must be one of ${SCOPES.join(', ')}` }))
  .min(1, 'must name at least one scope')
  .max(SCOPES.length * 2);
const label = z.string().trim().max(100, 'must be at most 100 characters');
const keyParams = z.object({ id: z.string().min(1).max(200), keyId: z.string().min(1).max(100) });

export const getAgentsByIdKeys = defineRoute({
  method: 'GET',
  path: '/agents/:id/keys',
  response: z.array(keyRowSchema),
  errors: ['not_found', 'not_authorized', 'workspace_locked'],
  auth: policies.keys.list,
  summary: "A participant's keys: [{ keyId, label, scopes, workspaceId, workspaceLocked, createdAt, lastUsedAt, hashPrefix }]. {id} may be 'me'; the participant itself or its creator.",
  params: agentIdParam,
  handler: async (c) => keysOfParticipant(c.deps, c.identity(), c.params.id),
});

export const postAgentsByIdKeys = defineRoute({
  method: 'POST',
  path: '/agents/:id/keys',
  response: mintedKeySchema,
  successStatus: 201,
  errors: ['not_found', 'workspace_not_found', 'not_authorized', 'workspace_locked'],
  auth: policies.keys.create,
  summary:
    'Mint a key { label?, scopes?, workspaceId?, workspaceLocked? }; the value is shown once. Scopes default to the caller key\'s own and can never be broader. A locked key pins X-Workspace-Id (another workspace: 403).',
  params: agentIdParam,
  body: z.strictObject({ label: label.optional(), scopes: scopeList.optional(), workspaceId: z.string().min(1).max(200).nullable().optional(), workspaceLocked: z.boolean().optional() }),
  handler: async (c) => {
    const key = await mintParticipantKey(c.deps, c.identity(), c.params.id, c.body);
    c.status(201);
    return key;
  },
});

export const patchAgentsByIdKeysByKeyId = defineRoute({
  method: 'PATCH',
  path: '/agents/:id/keys/:keyId',
  response: keyEditSchema,
  errors: ['not_found', 'not_authorized', 'workspace_locked'],
  auth: policies.keys.edit,
  summary: 'Edit a key { label?, scopes?, workspaceLocked? }; omitted fields are kept. A workspace-locked caller key cannot remove restrictions.',
  params: keyParams,
  body: z.strictObject({ label: label.optional(), scopes: scopeList.optional(), workspaceLocked: z.boolean().optional() }),
  handler: async (c) => {
    return editParticipantKey(c.deps, c.identity(), c.params.id, c.params.keyId, c.body);
  },
});

export const deleteAgentsByIdKeysByKeyId = defineRoute({
  method: 'DELETE',
  path: '/agents/:id/keys/:keyId',
  errors: ['not_found', 'conflict', 'not_authorized', 'workspace_locked'],
  auth: policies.keys.remove,
  summary: 'Revoke a key (204); later requests with it get 401. The key authorizing this request cannot revoke itself (409).',
  params: keyParams,
  handler: async (c) => {
    await revokeParticipantKey(c.deps, c.identity(), c.params.id, c.params.keyId);
  },
});

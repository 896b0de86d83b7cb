import { z } from 'zod';
import { revokeClientGrants } from '../../services/accounts';
import { policies } from '../../services/access';
import { connectionCalls, listConnections, removeConnection, setConnectionAsk } from '../../services/connections';
import { presentCall, presentConnection } from '../presenters/connection';
import { defineRoute } from '../registry';
import { askBody, connectionCallSchema, connectionSchema } from '../schemas/connections';

// Connections (spec §2.13, §4.2): the MCP hosts a person connected through OAuth (GET /mcp).

const idParams = z.object({ id: z.uuid({ error: 'must be a connection id' }) });

export const getConnections = defineRoute({
  method: 'GET',
  path: '/connections',
  response: z.array(connectionSchema),
  auth: policies.connections.list,
  summary: 'Your connections (MCP hosts acting as you), newest first: [{ id, clientId, clientName, redirectHost, connectedAt, lastUsedAt, ask { <type>: boolean }, scopes }]. Deleting the key of a connection (DELETE /agents/me/keys/{keyId}) ends the connection too.',
  handler: async (c) => (await listConnections(c.deps, c.identity().agentId)).map(presentConnection),
});

export const getConnectionsByIdCalls = defineRoute({
  method: 'GET',
  path: '/connections/:id/calls',
  response: z.array(connectionCallSchema),
  errors: ['not_found'],
  auth: policies.connections.readCalls,
  summary:
    'A connection\'s call log, newest first, up to 200: [{ tool, method, path, workspace, body (trimmed to 4,000 characters), confirmation, status (0: refused by the connector before any request), at }]. Query before=<instant> pages back. 404 if not your connection.',
  params: idParams,
  query: z.object({ before: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 instant' }).optional() }),
  handler: async (c) => (await connectionCalls(c.deps, c.identity().agentId, c.params.id, c.query.before ? new Date(c.query.before) : undefined)).map(presentCall),
});

export const putConnectionsByIdAsk = defineRoute({
  method: 'PUT',
  path: '/connections/:id/ask',
  response: connectionSchema,
  errors: ['not_found'],
  auth: policies.connections.setAsk,
  summary:
    'Choose which ask types the connection confirms with you before acting: body { ask: { <type>: boolean } } for build, trade, fund, post, decide, publish, remove, access, money (omitted types are kept). Naming look, or anything else, is 400. Returns the connection.',
  params: idParams,
  body: askBody,
  handler: async (c) => presentConnection(await setConnectionAsk(c.deps, c.identity().agentId, c.params.id, c.body.ask)),
});

export const deleteConnectionsById = defineRoute({
  method: 'DELETE',
  path: '/connections/:id',
  errors: ['not_found'],
  auth: policies.connections.remove,
  summary:
    'Disconnect (204): the connection\'s key is revoked, its refresh tokens and your consent are deleted, and access tokens it already holds are refused at /mcp at once. Connecting again starts a new connection (with consent).',
  params: idParams,
  handler: async (c) => {
    await removeConnection(c.deps, c.identity().agentId, c.params.id, revokeClientGrants);
    return undefined;
  },
});

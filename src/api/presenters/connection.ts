import type { CallRow, ConnectionRow } from '../../services/connections';

export function presentConnection(c: ConnectionRow) {
  return {
    id: c.id,
    clientId: c.clientId,
    clientName: c.clientName,
    redirectHost: c.redirectHost,
    connectedAt: c.connectedAt.toISOString(),
    lastUsedAt: c.lastUsedAt ? c.lastUsedAt.toISOString() : null,
    ask: { ...c.ask },
    scopes: [...c.scopes],
  };
}

export function presentCall(r: CallRow) {
  return {
    tool: r.tool,
    method: r.method,
    path: r.path,
    workspace: r.workspace,
    body: r.body,
    confirmation: r.confirmation,
    status: r.status,
    at: r.at.toISOString(),
  };
}

import { randomBytes } from 'node:crypto';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import { normalizeAsk, trimBody, type AskType, type Confirmation } from '../../domain/connections';
import { hashKey, mintKey } from '../identity';
import { openSecret, sealSecret } from './secret';

export interface ConnectionRow {
  id: string;
  agentId: string;
  clientId: string;
  clientName: string;
  redirectHost: string;
  connectedAt: Date;
  lastUsedAt: Date | null;
  ask: Record<AskType, boolean>;
}

/** What the connector needs to act: the connection, and its key's value to send as X-Agent-Key. */
export interface ActiveConnection extends ConnectionRow {
  keyValue: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function rowOf(r: any): ConnectionRow {
  return {
    id: r.id,
    agentId: r.agent_id,
    clientId: r.client_id,
    clientName: r.client_name,
    redirectHost: r.redirect_host,
    connectedAt: r.connected_at,
    lastUsedAt: r.last_used_at,
    ask: normalizeAsk(r.ask),
  };
}

/**
 * A person connects an MCP host: the connection gets a key of its own (every scope: it acts as the
 * person, as a session does; its ask switches are what hold it back), stored encrypted so the
 * connector can send it. Returns the connection and a bearer token for /mcp.
 */
export async function openConnection(
  deps: Deps,
  input: { agentId: string; clientId: string; clientName?: string; redirectHost?: string },
): Promise<{ connection: ConnectionRow; token: string }> {
  return inTransaction(deps.ds, async (m) => {
    const key = await mintKey(m, input.agentId, { scopes: ['*'], label: `connection: ${input.clientName || input.clientId}`.slice(0, 100) });
    const token = `mcp_${randomBytes(24).toString('base64url')}`;
    const [r] = await m.query(
      `INSERT INTO connections (agent_id, client_id, client_name, redirect_host, key_id, key_secret, ask, token_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [input.agentId, input.clientId, input.clientName ?? '', input.redirectHost ?? '', key.keyId, sealSecret(deps.config.authSecret, key.apiKey), normalizeAsk(null), hashKey(token)],
    );
    return { connection: rowOf(r), token };
  });
}

/** The live connection a bearer token names (null when unknown or disconnected); marks it used. */
export async function connectionByToken(deps: Deps, token: string): Promise<ActiveConnection | null> {
  // An UPDATE through TypeORM answers [rows, count].
  const [rows] = await deps.ds.query(
    `UPDATE connections c SET last_used_at = now()
      FROM api_keys k
     WHERE c.token_hash = $1 AND c.revoked_at IS NULL AND k.id = c.key_id AND k.revoked_at IS NULL
     RETURNING c.*`,
    [hashKey(token)],
  );
  if (!rows.length) return null;
  const keyValue = openSecret(deps.config.authSecret, rows[0].key_secret);
  if (!keyValue) return null;
  return { ...rowOf(rows[0]), keyValue };
}

export interface CallRecord {
  tool: string;
  method: string;
  path: string;
  workspace: string | null;
  body: unknown;
  confirmation: Confirmation;
  /** The HTTP status of the request, or 0 when the connector refused before sending it. */
  status: number;
}

/** One call row (spec §2.13): the body trimmed to 4,000 characters. */
export async function logCall(deps: Deps, connectionId: string, call: CallRecord): Promise<void> {
  await deps.ds.query(
    `INSERT INTO connection_calls (connection_id, tool, method, path, workspace, body, confirmation, status, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [connectionId, call.tool, call.method, call.path, call.workspace, trimBody(call.body), call.confirmation, call.status, deps.clock.now()],
  );
}

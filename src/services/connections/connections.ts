import type { DataSource, EntityManager } from 'typeorm';
import { inTransaction } from '../../db/tx';
import { firstRow, rows } from '../../db/queryRows';
import { rowReader, type Row } from '../../db/rows';
import { Connection, ConnectionCall } from '../../entities/connection';
import { DomainError } from '../../errors';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { keyScopesForGrant, normalizeAsk, trimBody, type AskType, type Confirmation } from '../../domain/connections';
import { mintKey, revokeKeysById } from '../identity';

/** A connection (the entity's columns), its asks normalised, with the key scopes of its key (spec §5.5): what the person granted at consent. */
export type ConnectionRow = Omit<Row<Connection>, 'ask'> & { ask: Record<AskType, boolean>; scopes: string[] };

/**
 * What the connector needs to act: the connection, and its principal (the participant and the scopes
 * the person granted, as its key row holds them). No key value: the connector acts in process.
 */
export interface ActiveConnection extends ConnectionRow {
  principal: Principal;
}

const readConnection = rowReader(Connection);

/** A raw connections row (`SELECT *`, snake_case), with the columns this file reads by name. */
type ConnectionRaw = Record<string, unknown> & { key_id: string | null; client_id: string; ask: Record<string, boolean> | null };

/** A connection row with its key's columns (WITH_SCOPES, or connectionForGrant's join). */
type ScopedRaw = ConnectionRaw & { key_scopes: string[] | null; key_workspace_id?: string | null; key_locked?: boolean | null };

/** A connection row read with WITH_SCOPES (its key's scopes as key_scopes). */
function rowOf(r: ScopedRaw): ConnectionRow {
  return { ...readConnection(r), ask: normalizeAsk(r.ask), scopes: r.key_scopes ?? [] };
}

/** What revokes an account's OAuth grants to a client (the account system's tables), in the caller's transaction. */
export type RevokeGrants = (m: EntityManager, userId: string, clientId: string) => Promise<void>;

/** A connection row with its key's scopes. */
const WITH_SCOPES = `c.*, (SELECT k.scopes FROM api_keys k WHERE k.id = c.key_id) AS key_scopes`;

/**
 * The live connection of an OAuth grant (an access token's subject, client and scopes), opened on its
 * first use: the connection gets a key of its own carrying exactly the key scopes the person granted
 * (keyScopesForGrant); only its hash is stored, as for every key: the connector acts as the key row's
 * principal in process, never sending the key. Refused (null): a token issued
 * no later than the second its connection was removed, one whose account has no participant, and a
 * connection whose key was revoked, which ends there with its grants (a new one needs a new consent).
 */
export async function connectionForGrant(
  deps: Deps,
  grant: { userId: string; clientId: string; issuedAt: Date; scopes: string[] },
  client: () => Promise<{ name: string; redirectHost: string } | null>,
  revokeGrants: RevokeGrants,
): Promise<ActiveConnection | null> {
  const row = await inTransaction(deps.ds, async (m) => {
    const agents: Array<{ id: string }> = await m.query(`SELECT id FROM agents WHERE account_id = $1`, [grant.userId]);
    if (!agents.length) return null;
    const agentId = agents[0].id;
    await m.query(`SELECT pg_advisory_xact_lock(hashtext('connection:' || $1 || ':' || $2))`, [agentId, grant.clientId]);
    const live = await rows<ScopedRaw>(
      m,
      `UPDATE connections c SET last_used_at = now() FROM api_keys k
        WHERE c.agent_id = $1 AND c.client_id = $2 AND c.revoked_at IS NULL AND k.id = c.key_id AND k.revoked_at IS NULL
        RETURNING c.*, k.scopes AS key_scopes, k.workspace_id AS key_workspace_id, k.workspace_locked AS key_locked`,
      [agentId, grant.clientId],
    );
    if (live.length) return live[0];
    // Its key was revoked (DELETE /agents/me/keys/{keyId}): the connection ends, not silently replaced.
    const keyless = await rows<{ id: string }>(m, `UPDATE connections SET revoked_at = now() WHERE agent_id = $1 AND client_id = $2 AND revoked_at IS NULL RETURNING id`, [agentId, grant.clientId]);
    if (keyless.length) {
      await revokeGrants(m, grant.userId, grant.clientId);
      return null;
    }
    const cut = await rows<{ '?column?': number }>(
      m,
      `SELECT 1 FROM connections WHERE agent_id = $1 AND client_id = $2 AND revoked_at IS NOT NULL AND date_trunc('second', revoked_at) >= $3 LIMIT 1`,
      [agentId, grant.clientId, grant.issuedAt],
    );
    if (cut.length) return null;
    const info = await client();
    const name = info?.name ?? grant.clientId;
    const scopes = keyScopesForGrant(grant.scopes);
    const key = await mintKey(m, agentId, { scopes, label: `connection: ${name}`.slice(0, 100) });
    const [r] = await rows<ConnectionRaw>(
      m,
      `INSERT INTO connections (agent_id, client_id, client_name, redirect_host, key_id, ask, last_used_at)
       VALUES ($1, $2, $3, $4, $5, $6, now()) RETURNING *`,
      [agentId, grant.clientId, name, info?.redirectHost ?? '', key.keyId, normalizeAsk(null)],
    );
    const opened: ScopedRaw = { ...r, key_scopes: scopes, key_workspace_id: null, key_locked: false };
    return opened;
  });
  if (!row) return null;
  const conn = rowOf(row);
  return {
    ...conn,
    principal: { agentId: conn.agentId, keyId: row.key_id, scopes: conn.scopes, isMaster: false, keyWorkspaceId: row.key_workspace_id ?? null, keyLocked: !!row.key_locked },
  };
}

/**
 * Every connection of an account to a client ends now, with its key and the account's grants to the
 * client (an authorization code redeemed twice, a password reset the person asked to end them). When
 * no connection was opened yet, a removed one is recorded, so tokens issued before now are refused.
 */
export async function endConnectionsOfGrant(deps: Deps, userId: string, clientId: string | null, revokeGrants: RevokeGrants): Promise<number> {
  return inTransaction(deps.ds, async (m) => {
    const agents: Array<{ id: string }> = await m.query(`SELECT id FROM agents WHERE account_id = $1`, [userId]);
    let ended = 0;
    for (const { id: agentId } of agents) {
      const list = await rows<{ key_id: string | null; client_id: string }>(
        m,
        `UPDATE connections SET revoked_at = now() WHERE agent_id = $1 AND ($2::text IS NULL OR client_id = $2) AND revoked_at IS NULL RETURNING key_id, client_id`,
        [agentId, clientId],
      );
      ended += list.length;
      const keys = list.map((r) => r.key_id).filter((k): k is string => !!k);
      await revokeKeysById(m, keys);
      for (const c of new Set(list.map((r) => r.client_id))) await revokeGrants(m, userId, c);
      if (clientId && !list.length) {
        await m.query(`INSERT INTO connections (agent_id, client_id, ask, revoked_at) VALUES ($1, $2, $3, now())`, [agentId, clientId, normalizeAsk(null)]);
        await revokeGrants(m, userId, clientId);
      }
    }
    return ended;
  });
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

/** GET /connections: the caller's live connections, newest first. */
export async function listConnections(deps: Deps, agentId: string): Promise<ConnectionRow[]> {
  const list = await rows<ScopedRaw>(deps.ds, `SELECT ${WITH_SCOPES} FROM connections c WHERE agent_id = $1 AND revoked_at IS NULL ORDER BY connected_at DESC, id`, [agentId]);
  return list.map(rowOf);
}

const notYours = () => new DomainError('not_found', 'No such connection of yours.');

async function ownConnection(m: DataSource | EntityManager, agentId: string, id: string, lock = false): Promise<ConnectionRaw> {
  const row = await firstRow<ConnectionRaw>(m, `SELECT * FROM connections WHERE id = $1 AND agent_id = $2 AND revoked_at IS NULL${lock ? ' FOR UPDATE' : ''}`, [id, agentId]);
  if (!row) throw notYours();
  return row;
}

/** A call row as GET /connections/{id}/calls lists it (the entity's columns but its ids). */
export type CallRow = Omit<Row<ConnectionCall>, 'id' | 'connectionId' | 'confirmation'> & { confirmation: Confirmation };

export const CALLS_PAGE = 200;

/** GET /connections/{id}/calls: up to 200 call rows, newest first, strictly before `before` when given. */
export async function connectionCalls(deps: Deps, agentId: string, id: string, before?: Date): Promise<CallRow[]> {
  await ownConnection(deps.ds, agentId, id);
  return rows<CallRow>(
    deps.ds,
    `SELECT tool, method, path, workspace, body, confirmation, status, at FROM connection_calls
      WHERE connection_id = $1 AND ($2::timestamptz IS NULL OR at < $2) ORDER BY at DESC, id DESC LIMIT ${CALLS_PAGE}`,
    [id, before ?? null],
  );
}

/** PUT /connections/{id}/ask: switch asking on or off per type (look stays off); the connection as it is now. */
export async function setConnectionAsk(deps: Deps, agentId: string, id: string, ask: Partial<Record<Exclude<AskType, 'look'>, boolean>>): Promise<ConnectionRow> {
  return inTransaction(deps.ds, async (m) => {
    const row = await ownConnection(m, agentId, id, true);
    const next = normalizeAsk({ ...normalizeAsk(row.ask), ...ask });
    const [updated] = await rows<ScopedRaw>(m, `UPDATE connections c SET ask = $2 WHERE id = $1 RETURNING ${WITH_SCOPES}`, [id, next]);
    return rowOf(updated);
  });
}

/**
 * DELETE /connections/{id}: its key is revoked, the client's refresh tokens and consent for the
 * account go, and the connection is marked removed, so access tokens issued before now are refused
 * at /mcp from this moment (their signatures are still good until they expire).
 */
export async function removeConnection(
  deps: Deps,
  agentId: string,
  id: string,
  revokeGrants: RevokeGrants,
): Promise<void> {
  await inTransaction(deps.ds, async (m) => {
    const row = await ownConnection(m, agentId, id, true);
    await m.query(`UPDATE connections SET revoked_at = now() WHERE id = $1`, [id]);
    if (row.key_id) await revokeKeysById(m, [row.key_id]);
    const agent = await firstRow<{ account_id: string | null }>(m, `SELECT account_id FROM agents WHERE id = $1`, [agentId]);
    if (agent?.account_id) await revokeGrants(m, agent.account_id, row.client_id);
  });
}

/** Every live connection of a participant is removed with its key (its account was deleted). */
export async function removeConnectionsOf(m: EntityManager, agentId: string): Promise<void> {
  const ended = await rows<{ key_id: string | null }>(m, `UPDATE connections SET revoked_at = now() WHERE agent_id = $1 AND revoked_at IS NULL RETURNING key_id`, [agentId]);
  const keys = ended.map((r) => r.key_id).filter((k): k is string => !!k);
  await revokeKeysById(m, keys);
}

/**
 * Whether an OAuth client's connections were all removed (none left live): its refresh tokens went
 * with them, so a refresh it sends is refused, and the refusal can say why.
 */
export async function clientConnectionsRemoved(deps: Deps, clientId: string): Promise<boolean> {
  const [row] = await rows<{ live: number; all: number }>(deps.ds, `SELECT count(*) FILTER (WHERE revoked_at IS NULL)::int AS live, count(*)::int AS all FROM connections WHERE client_id = $1`, [clientId]);
  return row.all > 0 && row.live === 0;
}

import type { DataSource, EntityManager } from 'typeorm';
import { ApiKey } from '../../entities/agent';
import { rows } from '../../db/queryRows';

/**
 * Identity owns `agents` and `api_keys` (src/services/tables.ts). Accounts, participants, hooks,
 * deletions, connections and access change those rows through these, inside their own transactions.
 */

/** Link a participant to the account that signs in as it. */
export async function linkAgentAccount(m: EntityManager, agentId: string, accountId: string): Promise<void> {
  await m.query(`UPDATE agents SET account_id = $2 WHERE id = $1`, [agentId, accountId]);
}

/** Unlink every participant of an account (the account is deleted); returns their ids. */
export async function unlinkAccountAgents(m: EntityManager, accountId: string): Promise<string[]> {
  return (await rows<{ id: string }>(m, `UPDATE agents SET account_id = NULL WHERE account_id = $1 RETURNING id`, [accountId])).map((r) => r.id);
}

export async function unlinkAgent(m: EntityManager, agentId: string): Promise<void> {
  await m.query(`UPDATE agents SET account_id = NULL WHERE id = $1`, [agentId]);
}

/** An unclaimed participant claimed by an account. */
export async function claimAgent(m: EntityManager, agentId: string, accountId: string): Promise<void> {
  await m.query(`UPDATE agents SET unclaimed = false, claimed_at = now(), account_id = $2 WHERE id = $1`, [agentId, accountId]);
}

export async function deleteAgentRow(m: EntityManager, agentId: string): Promise<void> {
  await m.query(`DELETE FROM agents WHERE id = $1`, [agentId]);
}

/** Merge notification switches into the participant's row. */
export async function mergeNotifications(q: Pick<EntityManager, 'query'>, agentId: string, patch: Record<string, boolean>): Promise<void> {
  await q.query(`UPDATE agents SET notifications = coalesce(notifications, '{}'::jsonb) || $2::jsonb WHERE id = $1`, [agentId, JSON.stringify(patch)]);
}

/** Revoke the still-live keys among these ids. */
export async function revokeKeysById(m: EntityManager, keyIds: string[]): Promise<void> {
  if (keyIds.length) await m.query(`UPDATE api_keys SET revoked_at = now() WHERE id = ANY($1) AND revoked_at IS NULL`, [keyIds]);
}

/** Revoke every live key of a participant, stamped `at`. */
export async function revokeKeysOfAgent(m: EntityManager, agentId: string, at: Date): Promise<void> {
  await m.query(`UPDATE api_keys SET revoked_at = $2 WHERE agent_id = $1 AND revoked_at IS NULL`, [agentId, at]);
}

/** Revoke one key (the caller has locked and checked it). */
export async function revokeKeyRow(m: EntityManager, keyId: string): Promise<void> {
  await m.update(ApiKey, { id: keyId }, { revokedAt: () => 'now()' });
}

export async function updateKeyRow(m: EntityManager, keyId: string, fields: Pick<ApiKey, 'label' | 'scopes' | 'workspaceLocked'>): Promise<void> {
  await m.update(ApiKey, { id: keyId }, fields);
}

/** Stamp a key's last use unless it was stamped after `stale` (one conditional UPDATE). */
export function recordKeyUse(ds: DataSource, keyId: string, now: Date, stale: Date): Promise<unknown> {
  return ds
    .createQueryBuilder()
    .update(ApiKey)
    .set({ lastUsedAt: now })
    .where('id = :keyId AND (last_used_at IS NULL OR last_used_at <= :stale)', { keyId, stale })
    .execute();
}

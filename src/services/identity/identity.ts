import { hash as digest, randomBytes, randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { logger } from '../../logger';
import { pgCode } from '../../db/tx';
import type { Deps } from '../../deps';
import { accountId, openAccount } from '../ledger';
import { firstRow, rows } from '../../db/queryRows';

export const PLATFORM_AGENT_ID = 'platform';
export const NICKNAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{2,29}$/;

export function hashKey(raw: string): string {
  return digest('sha256', raw, 'hex');
}

export function newKeyValue(): string {
  return `mpk_${randomBytes(24).toString('base64url')}`;
}

export interface MintedKey {
  keyId: string;
  apiKey: string;
  scopes: string[];
  label: string;
  workspaceId: string | null;
  workspaceLocked: boolean;
  createdAt: Date;
}

/** Store a new key hashed; the value is returned once and never again. */
export async function mintKey(
  m: EntityManager,
  agentId: string,
  opts: { scopes: string[]; label?: string; workspaceId?: string | null; workspaceLocked?: boolean; isMaster?: boolean; value?: string },
): Promise<MintedKey> {
  const apiKey = opts.value ?? newKeyValue();
  const hash = hashKey(apiKey);
  const keyId = `key_${randomBytes(9).toString('base64url')}`;
  const [row] = await rows<{ created_at: Date }>(
    m,
    `INSERT INTO api_keys (id, agent_id, hash, hash_prefix, label, scopes, workspace_id, workspace_locked, is_master)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING created_at`,
    [keyId, agentId, hash, hash.slice(0, 8), opts.label ?? '', opts.scopes, opts.workspaceId ?? null, opts.workspaceLocked ?? false, opts.isMaster ?? false],
  );
  return { keyId, apiKey, scopes: opts.scopes, label: opts.label ?? '', workspaceId: opts.workspaceId ?? null, workspaceLocked: opts.workspaceLocked ?? false, createdAt: row.created_at };
}

export interface CreateAgentInput {
  id?: string;
  nickname: string;
  operator?: string | null;
  bio?: string;
  intent?: string;
  source?: string | null;
  parentId?: string | null;
  createdBy?: string | null;
  unclaimed?: boolean;
}

/** Agent row + its participant account, in the caller's transaction. 409 on a taken nickname or id. */
export async function createAgent(m: EntityManager, input: CreateAgentInput): Promise<string> {
  const id = input.id ?? randomUUID();
  try {
    await m.query('SAVEPOINT create_agent');
    await m.query(
      `INSERT INTO agents (id, nickname, operator, bio, intent, source, parent_id, created_by, unclaimed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [id, input.nickname, input.operator ?? null, input.bio ?? '', input.intent ?? '', input.source ?? null, input.parentId ?? null, input.createdBy ?? null, input.unclaimed ?? false],
    );
    await m.query('RELEASE SAVEPOINT create_agent');
  } catch (err) {
    if (pgCode(err) === '23505') {
      await m.query('ROLLBACK TO SAVEPOINT create_agent');
      // A second paste of a registration lands here: say that the key is not shown again, and how to get one.
      const [taken] = (await m.query(`SELECT id FROM agents WHERE id = $1 OR lower(nickname) = lower($2) LIMIT 1`, [id, input.nickname])) as Array<{ id: string }>;
      const owner = taken?.id ?? id;
      throw new DomainError(
        'nickname_taken',
        `The nickname "${input.nickname}" or agent id "${id}" is already registered (as ${owner}). Its key was shown once, when it registered, and is never shown again: if the participant is yours, mint another key with POST /api/agents/${owner}/keys sent with a key you still hold (or your session); otherwise choose another name.`,
        { agentId: owner },
      );
    }
    throw err;
  }
  await openAccount(m, accountId.agent(id), 'participant');
  return id;
}

export interface ResolvedKey {
  agentId: string;
  keyId: string;
  scopes: string[];
  workspaceId: string | null;
  workspaceLocked: boolean;
  isMaster: boolean;
  lastUsedAt: Date | null;
}

/** The participant and key behind a raw key value; null when unknown or revoked. */
export async function keyHolder(deps: Deps, raw: string): Promise<ResolvedKey | null> {
  const r = await firstRow<{ id: string; agent_id: string; scopes: string[]; workspace_id: string | null; workspace_locked: boolean; is_master: boolean; last_used_at: Date | null }>(
    deps.ds,
    `SELECT id, agent_id, scopes, workspace_id, workspace_locked, is_master, last_used_at
       FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`,
    [hashKey(raw)],
  );
  if (!r) return null;
  return { agentId: r.agent_id, keyId: r.id, scopes: r.scopes, workspaceId: r.workspace_id, workspaceLocked: r.workspace_locked, isMaster: r.is_master, lastUsedAt: r.last_used_at };
}

/**
 * The platform operator identity and its master key. MASTER_API_KEY wins; otherwise a key is
 * generated at first start, stored hashed, and printed once. `generated` is the key to mint then, one
 * per process: a start whose commit landed but whose answer was lost starts again, finds its own key
 * stored, and prints it then.
 */
export async function ensurePlatform(ds: DataSource, masterKey: string | undefined, generated = newKeyValue()): Promise<{ printedKey?: string }> {
  const out = await ds.transaction(async (m): Promise<{ printedKey?: string }> => {
    await m.query(`SELECT pg_advisory_xact_lock(727275)`);
    await m.query(
      `INSERT INTO agents (id, nickname, operator, is_platform) VALUES ($1, 'platform', NULL, true) ON CONFLICT (id) DO NOTHING`,
      [PLATFORM_AGENT_ID],
    );
    await openAccount(m, accountId.agent(PLATFORM_AGENT_ID), 'participant');
    if (masterKey) {
      const hash = hashKey(masterKey);
      const exists = await rows(m, `SELECT 1 FROM api_keys WHERE hash = $1 AND is_master AND revoked_at IS NULL`, [hash]);
      if (!exists.length) await mintKey(m, PLATFORM_AGENT_ID, { scopes: ['*'], label: 'master (MASTER_API_KEY)', isMaster: true, value: masterKey });
      return {};
    }
    // A live master key: this process's own generated one (print it), or another (print nothing).
    const [live] = await rows<{ mine: boolean | null; any: boolean }>(m, `SELECT bool_or(hash = $1) AS mine, count(*) > 0 AS any FROM api_keys WHERE is_master AND revoked_at IS NULL`, [hashKey(generated)]);
    if (live.mine) return { printedKey: generated };
    if (live.any) return {};
    const key = await mintKey(m, PLATFORM_AGENT_ID, { scopes: ['*'], label: 'master (generated)', isMaster: true, value: generated });
    return { printedKey: key.apiKey };
  });
  // Printed once committed: the operator must never be shown a key that was rolled back.
  if (out.printedKey) {
    logger.warn('generated a master key; it is printed once on stdout and stored hashed');
    process.stdout.write(`\nMASTER_API_KEY=${out.printedKey}\n(store it now: it is not shown again)\n\n`);
  }
  return out;
}

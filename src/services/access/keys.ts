import { IsNull, Not, type DataSource, type EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { Agent, ApiKey } from '../../entities/agent';
import { DomainError } from '../../errors';
import { inTransaction } from '../../db/tx';
import { scopesWithin, type Principal } from '../../domain/capabilities';
import { logger } from '../../logger';
import { mintKey, PLATFORM_AGENT_ID, recordKeyUse, revokeKeyRow, updateKeyRow } from '../identity';
import { findWorkspace } from '../workspaces';
import { requireSelfOrCreator } from './policies/participants';

/** A key as GET /agents/{id}/keys lists it (never its hash). */
export interface KeyRow {
  keyId: string;
  label: string;
  scopes: string[];
  workspaceId: string | null;
  workspaceLocked: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  hashPrefix: string;
}

function listed(k: ApiKey): KeyRow {
  return {
    keyId: k.id,
    label: k.label,
    scopes: k.scopes,
    workspaceId: k.workspaceId,
    workspaceLocked: k.workspaceLocked,
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
    hashPrefix: k.hashPrefix,
  };
}

/**
 * 'self/owner' (spec §5.4): the participant itself, its creator (or parent), or the master key.
 * A workspace admin is not enough. Returns the target's id; `act` names the refused act in the 403.
 */
export async function resolveOwnedAgent(m: DataSource | EntityManager, actor: Principal, idParam: string, act = 'manage its keys'): Promise<string> {
  const id = idParam === 'me' ? actor.agentId : idParam;
  const a = await m.getRepository(Agent).findOne({ select: { id: true, parentId: true, createdBy: true, claimedBy: true }, where: { id } });
  if (!a) throw new DomainError('not_found', `Participant "${id}" was not found.`);
  // The policy's self/owner rule, asked where the row is read: inside the caller's transaction when `m` is one (a money move's).
  requireSelfOrCreator(actor, a, act);
  return a.id;
}

export async function listKeys(ds: DataSource, agentId: string): Promise<KeyRow[]> {
  const keys = await ds.getRepository(ApiKey).find({ where: { agentId, revokedAt: IsNull() }, order: { createdAt: 'ASC', id: 'ASC' } });
  return keys.map(listed);
}

/** 403 scope_denied when an agent-key caller asks for scopes broader than its own (spec §5.5). */
export function refuseBroaderScopes(actor: Principal, requested: readonly string[]): void {
  const excess = scopesWithin(actor.scopes, requested);
  if (excess.length) {
    throw new DomainError('scope_denied', `Your key cannot grant ${excess.join(', ')}: a key never grants scopes broader than its own.`, {
      requiredScopes: excess,
    });
  }
}

export interface MintInput {
  label?: string;
  scopes?: string[];
  workspaceId?: string | null;
  workspaceLocked?: boolean;
}

/** POST /agents/{id}/keys: the value is returned once. A locked caller key only mints keys locked to its workspace. */
export async function createKey(ds: DataSource, actor: Principal, agentId: string, input: MintInput) {
  const scopes = [...new Set(input.scopes ?? (actor.scopes ?? ['*']))];
  refuseBroaderScopes(actor, scopes);
  return inTransaction(ds, async (m) => {
    let workspaceId: string | null = null;
    if (input.workspaceId) {
      const ws = await findWorkspace(m, input.workspaceId);
      if (!ws) throw new DomainError('workspace_not_found', `No workspace "${input.workspaceId}" exists.`);
      workspaceId = ws.id;
    }
    let locked = input.workspaceLocked ?? false;
    if (actor.keyLocked) {
      if (input.workspaceLocked === false || (workspaceId && workspaceId !== actor.keyWorkspaceId)) {
        throw new DomainError('workspace_locked', 'Your key is locked to one workspace: it can only mint keys locked to that workspace.', {
          keyWorkspaceId: actor.keyWorkspaceId,
        });
      }
      workspaceId = actor.keyWorkspaceId;
      locked = true;
    }
    if (locked && !workspaceId) throw new DomainError('validation_failed', 'workspaceLocked needs a workspaceId to lock the key to.');
    const key = await mintKey(m, agentId, { scopes, label: input.label ?? '', workspaceId, workspaceLocked: locked });
    return { ...key, createdAt: key.createdAt.toISOString() };
  });
}

async function lockedKey(m: EntityManager, agentId: string, keyId: string): Promise<ApiKey> {
  const key = await m.getRepository(ApiKey).findOne({ where: { id: keyId, agentId, revokedAt: IsNull() }, lock: { mode: 'pessimistic_write' } });
  if (!key) throw new DomainError('not_found', `Key "${keyId}" was not found for participant "${agentId}".`);
  return key;
}

export interface KeyPatch {
  label?: string;
  scopes?: string[];
  workspaceLocked?: boolean;
}

/** PATCH /agents/{id}/keys/{keyId}: omitted fields are kept; a locked caller key cannot remove restrictions. */
export async function updateKey(ds: DataSource, actor: Principal, agentId: string, keyId: string, patch: KeyPatch) {
  const scopes = patch.scopes ? [...new Set(patch.scopes)] : undefined;
  if (scopes) refuseBroaderScopes(actor, scopes);
  return inTransaction(ds, async (m) => {
    const key = await lockedKey(m, agentId, keyId);
    if (patch.workspaceLocked === false && key.workspaceLocked && actor.keyLocked) {
      throw new DomainError('workspace_locked', 'Your key is workspace-locked: it cannot remove the lock of a key.', { keyWorkspaceId: actor.keyWorkspaceId });
    }
    if (actor.keyLocked && key.workspaceId !== actor.keyWorkspaceId) {
      throw new DomainError('workspace_locked', 'Your key is workspace-locked: it may only edit keys of its own workspace.', { keyWorkspaceId: actor.keyWorkspaceId });
    }
    if (patch.workspaceLocked === true && !key.workspaceId) {
      throw new DomainError('validation_failed', 'This key has no workspaceId to lock it to; mint a key with workspaceId instead.');
    }
    await updateKeyRow(m, keyId, { label: patch.label ?? key.label, scopes: scopes ?? key.scopes, workspaceLocked: patch.workspaceLocked ?? key.workspaceLocked });
    const out: Record<string, unknown> = { ok: true, keyId };
    if (patch.label !== undefined) out.label = patch.label;
    if (scopes) out.scopes = scopes;
    if (patch.workspaceLocked !== undefined) out.workspaceLocked = patch.workspaceLocked;
    return out;
  });
}

/** DELETE /agents/{id}/keys/{keyId}: later requests with it get 401; the key of this request cannot be revoked. */
export async function revokeKey(ds: DataSource, actor: Principal, agentId: string, keyId: string): Promise<void> {
  if (keyId === actor.keyId) throw new DomainError('conflict', 'The key authorizing this request cannot revoke itself; use another key.');
  await inTransaction(ds, async (m) => {
    const key = await lockedKey(m, agentId, keyId);
    if (actor.keyLocked && key.workspaceId !== actor.keyWorkspaceId) {
      throw new DomainError('workspace_locked', 'Your key is workspace-locked: it may only revoke keys of its own workspace.', { keyWorkspaceId: actor.keyWorkspaceId });
    }
    if (key.isMaster && agentId === PLATFORM_AGENT_ID) {
      const others = await m.getRepository(ApiKey).existsBy({ isMaster: true, revokedAt: IsNull(), id: Not(keyId) });
      if (!others) throw new DomainError('conflict', 'This is the last master key; it cannot be revoked.');
    }
    await revokeKeyRow(m, keyId);
  });
}

const KEY_USE_EVERY_MS = 60_000;
const MAX_KEY_USES = 20_000;
const keyUses = new WeakMap<Deps, Map<string, number>>();

/**
 * Bump last_used_at at most once a minute per key, with nothing on the request's path: this process
 * remembers when it last wrote each key (no Redis or Postgres round trip per request, issue 29), and
 * the one conditional UPDATE it then sends writes only when the stored use is a minute old, so API
 * processes sharing the database change a key's row at most about once a minute between them.
 * Fire-and-forget: a failure is logged and never fails the request.
 */
export function touchKeyUsed(deps: Deps, keyId: string): void {
  const now = deps.clock.now();
  let seen = keyUses.get(deps);
  if (!seen) keyUses.set(deps, (seen = new Map()));
  const last = seen.get(keyId);
  const since = last === undefined ? Infinity : now.getTime() - last;
  if (since >= 0 && since < KEY_USE_EVERY_MS) return; // a clock set back (tests) writes again
  if (seen.size >= MAX_KEY_USES) seen.clear();
  seen.set(keyId, now.getTime());
  recordKeyUse(deps.ds, keyId, now, new Date(now.getTime() - KEY_USE_EVERY_MS)).catch((err: unknown) => logger.warn({ err, keyId }, 'could not record key use'));
}

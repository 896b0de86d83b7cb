import { randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { DomainError } from '../../errors';
import { removeConnectionsOf } from '../connections';
import { createAgent, linkAgentAccount, NICKNAME_RE, unlinkAccountAgents } from '../identity';

/** A nickname from the account's name (or the email's local part), made to fit NICKNAME_RE. */
export function nicknameFrom(name: string, email: string): string {
  const clean = (s: string) => s.normalize('NFKD').replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').replace(/-+$/, '').slice(0, 24);
  const base = clean(name) || clean(email.split('@')[0] ?? '');
  return NICKNAME_RE.test(base) ? base : `member-${randomBytes(3).toString('hex')}`;
}

async function linkedAgent(m: EntityManager, userId: string): Promise<string | null> {
  const rows: Array<{ id: string }> = await m.query(`SELECT id FROM agents WHERE account_id = $1`, [userId]);
  return rows[0]?.id ?? null;
}

/**
 * The account's participant (one per account, spec §5.1): created at sign-up with 0 credits, like
 * an API registration; created here as well when a sign-up hook did not finish, so a session always
 * resolves. Nickname collisions get a short suffix.
 */
export async function ensureAccountParticipant(deps: Deps, user: { id: string; name: string; email: string }): Promise<string> {
  return inTransaction(deps.ds, async (m) => {
    await m.query(`SELECT pg_advisory_xact_lock(hashtext('account:' || $1))`, [user.id]);
    const existing = await linkedAgent(m, user.id);
    if (existing) return existing;
    const base = nicknameFrom(user.name, user.email);
    for (let attempt = 0; ; attempt++) {
      const nickname = attempt === 0 ? base : `${base.slice(0, 24)}-${randomBytes(2).toString('hex')}`;
      try {
        const id = await createAgent(m, { nickname, operator: user.email });
        await linkAgentAccount(m, id, user.id);
        return id;
      } catch (err) {
        if (!(err instanceof DomainError && err.code === 'nickname_taken') || attempt >= 5) throw err;
      }
    }
  });
}

/** The caller behind a browser session: the account's participant, bypassing key scopes (spec §5.5). */
export function sessionPrincipal(agentId: string, accountId: string): Principal {
  return { agentId, keyId: null, scopes: null, isMaster: false, keyWorkspaceId: null, keyLocked: false, accountId };
}

/** The participant linked to an account, creating it when missing. */
export async function participantOfAccount(deps: Deps, user: { userId: string; name: string; email: string }): Promise<string> {
  const rows: Array<{ id: string }> = await deps.ds.query(`SELECT id FROM agents WHERE account_id = $1`, [user.userId]);
  return rows[0]?.id ?? ensureAccountParticipant(deps, { id: user.userId, name: user.name, email: user.email });
}

/** The caller a signed-in account acts as: its participant (created when missing), with the account's rights. */
export async function principalOfAccount(deps: Deps, user: { userId: string; name: string; email: string }): Promise<Principal> {
  return sessionPrincipal(await participantOfAccount(deps, user), user.userId);
}

/**
 * DELETE /auth/me: the account, its sessions and password go, with its OAuth grants and connections
 * (and their keys); its participant stays (its trades and ledger history are other people's history
 * too) and keeps answering to its own agent keys, unlinked.
 */
export async function deleteAccount(deps: Deps, accountId: string): Promise<void> {
  await inTransaction(deps.ds, async (m) => {
    for (const id of await unlinkAccountAgents(m, accountId)) await removeConnectionsOf(m, id);
    await m.query(`DELETE FROM auth_users WHERE id = $1`, [accountId]);
  });
}


import { randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { inTransaction, pgCode } from '../../db/tx';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { maxBig, toNano } from '../../domain/money';
import { claimAgent, createAgent, deleteAgentRow, hashKey, mintKey, NICKNAME_RE, unlinkAgent } from '../identity';
import { accountId, dropEmptyAgentAccount, transfer } from '../ledger';
import { createWorkspace } from '../workspaces';
import { applyTemplate, resolveTemplate } from '../templates';
import { firstRow, rows } from '../../db/queryRows';

export interface OnboardInput {
  workspace: { name: string; template?: string; templateParams?: Record<string, unknown>; visibility?: 'public' | 'private' };
  agentId?: string;
  nickname?: string;
  bio?: string;
}

async function grant(m: EntityManager, agentId: string, credits: number, memo: string): Promise<bigint> {
  const amount = toNano(credits);
  if (amount > 0n) await transfer(m, { from: accountId.issuance, to: accountId.agent(agentId), amount, kind: 'signup_grant', ref: agentId, memo });
  return amount;
}

/**
 * POST /onboard (open): a key-first, unclaimed participant owning a new workspace, the reduced grant
 * (UNCLAIMED_SIGNUP_CREDITS), one key with scopes ['*'], and a claim token, in one transaction.
 */
export async function onboardParticipant(deps: Deps, input: OnboardInput) {
  const nickname = input.nickname ?? input.agentId ?? `guest-${randomBytes(4).toString('hex')}`;
  if (!NICKNAME_RE.test(nickname)) {
    throw new DomainError('validation_failed', 'The nickname must be 3 to 30 characters of letters, digits, _ or -, starting with a letter or digit; send nickname when agentId is not one.');
  }
  const template = resolveTemplate(input.workspace.template ?? 'blank').id;
  return inTransaction(deps.ds, async (m) => {
    const id = await createAgent(m, { id: input.agentId, nickname, bio: input.bio, unclaimed: true, source: 'onboard' });
    const ws = await createWorkspace(m, id, { name: input.workspace.name, public: input.workspace.visibility === 'public' });
    const applied = await applyTemplate(deps, m, ws, template, input.workspace.templateParams);
    const credits = await grant(m, id, deps.config.UNCLAIMED_SIGNUP_CREDITS, 'unclaimed signup grant');
    const key = await mintKey(m, id, { scopes: ['*'], label: 'onboarding', workspaceId: ws.id });
    const token = `ct_${randomBytes(24).toString('base64url')}`;
    await m.query(`INSERT INTO claim_tokens (token_hash, agent_id) VALUES ($1, $2)`, [hashKey(token), id]);
    return {
      participantId: id,
      nickname,
      apiKey: key.apiKey,
      keyId: key.keyId,
      scopes: key.scopes,
      credits,
      creditsAfterClaim: maxBig(toNano(deps.config.SIGNUP_CREDITS), credits),
      workspace: {
        id: ws.id,
        name: ws.name,
        slug: ws.slug,
        ownerHandle: nickname,
        visibility: ws.public ? 'public' : 'private',
        template,
        metricsCreated: applied.metricsCreated,
        starterProposalId: applied.starterProposalId,
      },
      claimToken: token,
      claimUrl: `${deps.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/claim/${token}`,
    };
  });
}

async function workspacesOf(m: DataSource | EntityManager, agentId: string) {
  const rows: Array<{ id: string; name: string; slug: string }> = await m.query(
    `SELECT w.id, w.name, w.slug FROM memberships mb JOIN workspaces w ON w.id = mb.workspace_id WHERE mb.agent_id = $1 ORDER BY mb.joined_at, w.created_at`,
    [agentId],
  );
  return rows;
}

const unknownToken = () => new DomainError('not_found', 'This claim token is unknown or has already been used.');

/** GET /onboard/claim/{token}: who the token claims; 404 for an unknown or used token. */
export async function claimTokenInfo(deps: Deps, token: string) {
  const rows: Array<{ id: string; nickname: string }> = await deps.ds.query(
    `SELECT a.id, a.nickname FROM claim_tokens ct JOIN agents a ON a.id = ct.agent_id WHERE ct.token_hash = $1 AND ct.used_at IS NULL`,
    [hashKey(token)],
  );
  if (!rows.length) throw unknownToken();
  return { participantId: rows[0].id, nickname: rows[0].nickname, workspaces: await workspacesOf(deps.ds, rows[0].id) };
}

/**
 * Whether an account's own participant has done anything: money, a membership or workspace, a key,
 * a trade, a proposal or comment, agents it made or claimed. An inactive one (fresh from sign-up)
 * gives way to the participant the account claims.
 */
async function participantActive(m: EntityManager, agentId: string): Promise<boolean> {
  const [row] = await rows<{ active: boolean }>(
    m,
    `SELECT EXISTS (SELECT 1 FROM ledger_entries WHERE account_id = 'agent:' || $1)
         OR EXISTS (SELECT 1 FROM memberships WHERE agent_id = $1)
         OR EXISTS (SELECT 1 FROM workspaces WHERE owner_id = $1)
         OR EXISTS (SELECT 1 FROM api_keys WHERE agent_id = $1)
         OR EXISTS (SELECT 1 FROM trades WHERE agent_id = $1)
         OR EXISTS (SELECT 1 FROM proposals WHERE proposed_by = $1)
         OR EXISTS (SELECT 1 FROM proposal_comments WHERE author_id = $1)
         OR EXISTS (SELECT 1 FROM agents WHERE created_by = $1 OR claimed_by = $1 OR parent_id = $1) AS active`,
    [agentId],
  );
  return row.active;
}

/**
 * POST /onboard/claim (a browser session, spec §4.2): the account attaches an unclaimed participant
 * and becomes it. The account must have no active participant of its own: the one sign-up made,
 * still untouched, is removed, and the claimed participant is linked to the account in its place,
 * topped up to the full signup grant. Its agent keys and the session then resolve to the same identity.
 */
export async function claimParticipant(deps: Deps, actor: Principal, token: string) {
  const account = actor.accountId;
  if (!account) throw new DomainError('session_required', 'Only a browser session may claim a participant: sign in and send the session cookie.', { requiredCapabilities: ['session'] });
  return inTransaction(deps.ds, async (m) => {
    await m.query(`SELECT pg_advisory_xact_lock(hashtext('account:' || $1))`, [account]);
    const used = await firstRow<{ agent_id: string }>(
      m,
      `UPDATE claim_tokens SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL RETURNING agent_id`,
      [hashKey(token)],
    );
    if (!used) throw unknownToken();
    const agentId = used.agent_id;
    const own: Array<{ id: string }> = await m.query(`SELECT id FROM agents WHERE account_id = $1 FOR UPDATE`, [account]);
    for (const { id } of own) {
      if (await participantActive(m, id)) {
        throw new DomainError('conflict', `This account already has an active participant (${id}); an account holds one participant.`, { participantId: id });
      }
      await unlinkAgent(m, id);
      await dropEmptyAgentAccount(m, id);
      await deleteAgentRow(m, id);
    }
    await claimAgent(m, agentId, account);
    const topUp = await grant(m, agentId, Math.max(0, deps.config.SIGNUP_CREDITS - deps.config.UNCLAIMED_SIGNUP_CREDITS), 'claim top-up to the full signup grant');
    return { ok: true, participantId: agentId, creditsToppedUp: topUp, workspaces: await workspacesOf(m, agentId) };
  });
}

/** POST /waitlist: 409 when the address is already registered (compared case-insensitively). */
export async function joinWaitlist(deps: Deps, email: string): Promise<{ ok: true; email: string }> {
  try {
    await deps.ds.query(`INSERT INTO waitlist (email) VALUES ($1)`, [email]);
  } catch (err) {
    if (pgCode(err) === '23505') throw new DomainError('conflict', 'This email address is already on the waitlist.');
    throw err;
  }
  return { ok: true, email };
}

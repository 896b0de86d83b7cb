import { randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { inTransaction, pgCode } from '../../db/tx';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { maxBig, toNano } from '../../domain/money';
import { createAgent, hashKey, mintKey, NICKNAME_RE } from '../identity';
import { accountId, transfer } from '../ledger';
import { createWorkspace } from '../workspaces';
import { applyTemplate, resolveTemplate } from '../templates';

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
 * POST /onboard/claim: the claimer (the master key, or an identity that is not itself unclaimed and
 * has not claimed another participant) consumes the token; the participant is topped up to the full
 * signup grant and becomes claimed, owned by the claimer.
 */
export async function claimParticipant(deps: Deps, actor: Principal, token: string) {
  return inTransaction(deps.ds, async (m) => {
    const [me] = await m.query(`SELECT unclaimed FROM agents WHERE id = $1`, [actor.agentId]);
    if (!actor.isMaster && (!me || me.unclaimed)) {
      throw new DomainError('not_authorized', 'An unclaimed participant cannot claim: claim with an account of your own (or the master key).', {
        requiredCapabilities: ['session'],
      });
    }
    if (!actor.isMaster) {
      const prior = await m.query(`SELECT id FROM agents WHERE claimed_by = $1 LIMIT 1`, [actor.agentId]);
      if (prior.length) throw new DomainError('conflict', `You already claimed participant ${prior[0].id}; an account claims one participant.`, { participantId: prior[0].id });
    }
    const [rows] = await m.query(
      `UPDATE claim_tokens SET used_at = now(), used_by = $2 WHERE token_hash = $1 AND used_at IS NULL RETURNING agent_id`,
      [hashKey(token), actor.agentId],
    );
    if (!rows.length) throw unknownToken();
    const agentId: string = rows[0].agent_id;
    await m.query(`UPDATE agents SET unclaimed = false, claimed_by = $2, claimed_at = now() WHERE id = $1`, [agentId, actor.agentId]);
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

import type { EntityManager } from 'typeorm';
import { firstRow } from '../../db/queryRows';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { toNano } from '../../domain/money';
import { DomainError } from '../../errors';
import { accountId, transfer } from '../ledger';
import { onceByKey, type Once } from '../idempotency';

/**
 * The sign-up grant (spec §3.4, "the full signup grant" of a claimed identity): SIGNUP_CREDITS,
 * issued once to the participant of a person who signed up with an account. Its natural key is the
 * participant: a `signup_grant` leg already in its ledger (this grant, or an onboarding grant and
 * its claim top-up) means it was paid; an Idempotency-Key replays the first answer.
 */
export interface SignupGrant {
  /** The grant in nano (SIGNUP_CREDITS). */
  amount: bigint;
  /** Whether this participant may take it now. */
  available: boolean;
  /** When it was paid (this grant or an onboarding one), else null. */
  paidAt: Date | null;
}

async function paidAt(m: EntityManager | Deps['ds'], agentId: string): Promise<Date | null> {
  const first = await firstRow<{ at: Date }>(m, `SELECT e.created_at AS at FROM ledger_entries e WHERE e.account_id = $1 AND e.kind = 'signup_grant' ORDER BY e.id LIMIT 1`, [
    accountId.agent(agentId),
  ]);
  return first?.at ?? null;
}

/** GET /agents/signup-grant: what the grant is and whether the caller may take it. */
export async function signupGrantOf(deps: Deps, actor: Principal): Promise<SignupGrant> {
  const amount = toNano(deps.config.SIGNUP_CREDITS);
  const paid = await paidAt(deps.ds, actor.agentId);
  return { amount, available: amount > 0n && !paid && actor.accountId != null && !actor.isMaster, paidAt: paid };
}

/** POST /agents/signup-grant: pays the grant to the signed-in person's participant, once. */
export async function takeSignupGrant(deps: Deps, actor: Principal, idempotencyKey?: string): Promise<Once<SignupGrant & { balance: bigint }>> {
  // Who may take it (a browser session only) is the route's policy (policies/credits claimSignupGrant).
  const amount = toNano(deps.config.SIGNUP_CREDITS);
  if (amount <= 0n) throw new DomainError('grant_unavailable', 'This service gives no sign-up grant: get credits with a deposit or a transfer.');
  return inTransaction(deps.ds, (m) =>
    onceByKey(m, { participantId: actor.agentId, scope: '-', key: idempotencyKey, request: ['signup-grant'] }, async () => {
      // One grant per participant, also under two concurrent requests with different keys.
      await m.query(`SELECT pg_advisory_xact_lock(hashtext('signup-grant:' || $1))`, [actor.agentId]);
      if (await paidAt(m, actor.agentId)) throw new DomainError('grant_taken', 'Your sign-up grant was already paid: it is paid once per person.');
      const { toBalance } = await transfer(m, { from: accountId.issuance, to: accountId.agent(actor.agentId), amount, kind: 'signup_grant', ref: actor.agentId, memo: 'sign-up grant' });
      return { amount, available: false, paidAt: deps.clock.now(), balance: toBalance };
    }),
  );
}

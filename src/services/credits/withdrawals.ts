import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { inTransaction } from '../../db/tx';
import { rows } from '../../db/queryRows';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { withdrawalUnits } from '../../domain/credits';
import { formatCredits, toNano } from '../../domain/money';
import { Withdrawal } from '../../entities/credits';
import { DomainError } from '../../errors';
import { logger } from '../../logger';
import { accountId, balanceOf, transfer } from '../ledger';
import { resolveOwnedAgent } from '../access';
import { creditAccounts } from './accounts';
import { CHAIN_JOB_OPTS, chainDelay, requireChain, walletOf } from './chainAccess';
import { onceByKey, type Once } from '../idempotency';
import { nanoAmount } from './moveCredits';

/** Enqueue check number `check` of a withdrawal's job (the id carries the number, as for deposits). */
export async function enqueueSend(deps: Deps, withdrawalId: string, check: number, delay?: number) {
  return deps.hub.enqueue('chain', 'sendWithdrawal', { withdrawalId, check }, { ...CHAIN_JOB_OPTS, jobId: `withdrawal-${withdrawalId}-${check}`, delay: delay ?? (check ? chainDelay(deps, check - 1) : 0) });
}

/**
 * POST /agents/{id}/withdraw: the credits move to the withdrawal-pending account and a job sends
 * amount x creditValueUsd of the token to the registered wallet. Above WITHDRAW_REVIEW_CREDITS the
 * withdrawal waits for the platform operator's approval.
 */
/** What a withdrawal needs before anything moves: a chain, an amount of whole token units. */
function withdrawalTerms(deps: Deps, credits: number) {
  const chain = requireChain(deps);
  const amount = nanoAmount(credits);
  const units = withdrawalUnits(amount, chain.settings.unitsPerCredit);
  if (units === null) {
    throw new DomainError('validation_failed', `The amount must be a whole number of token units: a multiple of ${formatCredits(1_000_000_000n / chain.settings.unitsPerCredit)} credits.`);
  }
  return { amount, units, review: amount > toNano(deps.config.WITHDRAW_REVIEW_CREDITS) };
}

/** A withdrawal's dry run (POST /agents/{id}/withdraw with dryRun): where it would go, how much, whether it waits for review; nothing is written. */
export interface WithdrawalQuote {
  amount: bigint;
  units: bigint;
  toAddress: string;
  review: boolean;
  balance: bigint;
  affordable: boolean;
}

export async function quoteWithdrawal(deps: Deps, actor: Principal, p: { idParam: string; amount: number }): Promise<WithdrawalQuote> {
  const { amount, units, review } = withdrawalTerms(deps, p.amount);
  const agentId = await resolveOwnedAgent(deps.ds.manager, actor, p.idParam, 'withdraw its credits');
  const wallet = await walletOf(deps.ds.manager, agentId);
  if (!wallet) throw new DomainError('wallet_required', WALLET_REQUIRED);
  const balance = (await balanceOf(deps.ds, accountId.agent(agentId))) ?? 0n;
  return { amount, units, toAddress: wallet, review, balance, affordable: balance >= amount };
}

const WALLET_REQUIRED = 'Register a wallet first (PUT /agents/{id}/wallet): withdrawals are sent to it.';

export async function requestWithdrawal(deps: Deps, actor: Principal, p: { idParam: string; amount: number; idempotencyKey?: string }): Promise<Once<Withdrawal>> {
  const { amount, units, review } = withdrawalTerms(deps, p.amount);
  const out = await inTransaction(deps.ds, async (m) => {
    const agentId = await resolveOwnedAgent(m, actor, p.idParam, 'withdraw its credits');
    return onceByKey(m, { participantId: actor.agentId, scope: '-', key: p.idempotencyKey, request: ['withdraw', agentId, amount] }, async () => {
      const wallet = await walletOf(m, agentId);
      if (!wallet) throw new DomainError('wallet_required', WALLET_REQUIRED);
      const id = randomUUID();
      await transfer(m, { from: accountId.agent(agentId), to: creditAccounts.withdrawalsPending, amount, kind: 'withdrawal', ref: id });
      await m.getRepository(Withdrawal).insert({ id, agentId, amount, units, toAddress: wallet, status: review ? 'review' : 'queued' });
      return m.getRepository(Withdrawal).findOneOrFail({ where: { id } });
    });
  });
  if (out.value.status === 'queued') await enqueueSend(deps, out.value.id, 0);
  return out;
}

/** Restore a withdrawal's credits, once: only the transition out of an open status moves them. */
async function closeRefunded(m: EntityManager, w: Withdrawal, status: 'failed' | 'rejected', reason: string, extra: { releaseNonce?: boolean; decidedBy?: string } = {}): Promise<boolean> {
  const rows: unknown[] = await m.query(
    `UPDATE withdrawals SET status = $2, reason = $3, updated_at = now(), nonce = CASE WHEN $4 THEN NULL ELSE nonce END, decided_by = coalesce($5, decided_by)
      WHERE id = $1 AND status IN ('review','queued','signed') RETURNING id`,
    [w.id, status, reason, extra.releaseNonce ?? false, extra.decidedBy ?? null],
  );
  if (!rows.length) return false;
  await transfer(m, { from: creditAccounts.withdrawalsPending, to: accountId.agent(w.agentId), amount: w.amount, kind: 'withdrawal_restore', ref: w.id, memo: reason });
  return true;
}

/** POST /agents/withdrawals/{id}/approve|reject: the platform operator decides a withdrawal waiting for review (its route's rule is platform-only). */
export async function decideWithdrawal(deps: Deps, actor: Principal, id: string, decision: 'approve' | 'reject', reason?: string): Promise<Withdrawal> {
  const w = await inTransaction(deps.ds, async (m) => {
    const repo = m.getRepository(Withdrawal);
    const w = await repo.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    if (!w) throw new DomainError('not_found', `Withdrawal "${id}" was not found.`);
    if (w.status !== 'review') throw new DomainError('conflict', `Withdrawal "${id}" is ${w.status}, not waiting for review.`);
    if (decision === 'approve') await repo.update({ id }, { status: 'queued', decidedBy: actor.agentId, updatedAt: new Date() });
    else await closeRefunded(m, w, 'rejected', reason ?? 'Rejected by the platform operator.', { decidedBy: actor.agentId });
    return repo.findOneOrFail({ where: { id } });
  });
  if (w.status === 'queued') await enqueueSend(deps, w.id, 0);
  return w;
}

export async function withdrawalsOf(deps: Deps, actor: Principal, idParam: string, limit: number): Promise<Withdrawal[]> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam, 'see its withdrawals');
  return deps.ds.getRepository(Withdrawal).find({ where: { agentId }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
}

async function fail(deps: Deps, w: Withdrawal, reason: string, releaseNonce = false): Promise<void> {
  await inTransaction(deps.ds, (m) => closeRefunded(m, w, 'failed', reason, { releaseNonce }));
}

/**
 * Sign the transfer and record it (hash, nonce, raw) before anything is broadcast. The nonce is the
 * node's pending count or one past the last this signer recorded, under a lock, so two withdrawals
 * never share one. Returns the withdrawal as signed (or as another run left it).
 */
async function signOnce(deps: Deps, w: Withdrawal): Promise<Withdrawal> {
  const chain = requireChain(deps);
  const signer = chain.settings.treasury;
  return inTransaction(deps.ds, async (m) => {
    const repo = m.getRepository(Withdrawal);
    const cur = await repo.findOneOrFail({ where: { id: w.id }, lock: { mode: 'pessimistic_write' } });
    if (cur.status !== 'queued') return cur;
    await m.query(`SELECT pg_advisory_xact_lock(hashtext('withdrawal-signer:' || $1))`, [signer]);
    const [{ n }] = await rows<{ n: number | null }>(m, `SELECT max(nonce) AS n FROM withdrawals WHERE signer = $1 AND nonce IS NOT NULL`, [signer]);
    const nonce = Math.max(await chain.pendingNonce(), n === null ? 0 : Number(n) + 1);
    const tx = await chain.signTransfer(cur.toAddress, cur.units, nonce);
    await repo.update({ id: w.id }, { status: 'signed', signer, nonce, txHash: tx.hash, rawTx: tx.raw, updatedAt: new Date() });
    return repo.findOneOrFail({ where: { id: w.id } });
  });
}

/**
 * The withdrawal job (check number `check`). It never sends twice: a queued withdrawal is signed and
 * recorded first, then broadcast; a signed one is looked up by its hash and, if the node has never
 * seen it, the SAME raw transaction is broadcast again. Confirmed (status 1 and the configured
 * confirmations): final. Reverted, refused by the node, or the treasury short: credits restored once.
 */
export async function sendWithdrawal(deps: Deps, withdrawalId: string, check: number): Promise<void> {
  const chain = requireChain(deps);
  let w = await deps.ds.getRepository(Withdrawal).findOne({ where: { id: withdrawalId } });
  if (!w || !['queued', 'signed'].includes(w.status)) return;
  await deps.ds.query(`UPDATE withdrawals SET checks = greatest(checks, $2), checked_at = now() WHERE id = $1`, [w.id, check + 1]);
  const later = async () => void (await enqueueSend(deps, withdrawalId, check + 1));
  if (w.status === 'queued') {
    const held = await chain.tokenBalance(chain.settings.treasury);
    if (held < w.units) return fail(deps, w, `The treasury holds ${held} token units, short of the ${w.units} this withdrawal needs; the credits were restored.`);
    w = await signOnce(deps, w);
    if (w.status !== 'signed') return;
    const sent = await chain.broadcast(w.rawTx!);
    if (typeof sent === 'object') return fail(deps, w, `The node refused the transaction: ${sent.rejected} The credits were restored.`, true);
    logger.info({ withdrawalId, txHash: w.txHash, nonce: w.nonce }, 'withdrawal broadcast');
    if (deps.config.CHAIN_FAULT_AFTER_BROADCAST) throw new Error('fault injected: the withdrawal job stops right after its broadcast');
    return later();
  }
  const r = await chain.receipt(w.txHash!);
  if (!r) {
    if (!(await chain.knows(w.txHash!))) {
      const again = await chain.broadcast(w.rawTx!);
      if (typeof again === 'object') return fail(deps, w, `The node refused the transaction: ${again.rejected} The credits were restored.`, true);
      if (again === 'known' && !(await chain.knows(w.txHash!)) && (await chain.pendingNonce()) > w.nonce!) {
        return fail(deps, w, `Nonce ${w.nonce} was used by another transaction, so this one can never be mined; the credits were restored.`);
      }
    }
    return later();
  }
  if (r.status !== 1) return fail(deps, w, 'The transfer reverted on chain; the credits were restored.');
  if (r.confirmations < chain.settings.confirmations) return later();
  await inTransaction(deps.ds, async (m) => {
    const rows: unknown[] = await m.query(
      `UPDATE withdrawals SET status = 'confirmed', block_number = $2, reason = NULL, updated_at = now() WHERE id = $1 AND status = 'signed' RETURNING id`,
      [w.id, r.blockNumber],
    );
    if (rows.length) await transfer(m, { from: creditAccounts.withdrawalsPending, to: creditAccounts.onchain, amount: w.amount, kind: 'withdrawal_paid', ref: w.id, memo: w.txHash });
  });
}

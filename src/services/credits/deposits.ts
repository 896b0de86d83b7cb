import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Chain, ReceiptView, TokenTransfer } from '../../chain/client';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { depositSplit } from '../../domain/credits';
import { Deposit } from '../../entities/credits';
import { DomainError } from '../../errors';
import { accountId, writeLedger } from '../ledger';
import { resolveOwnedAgent } from '../access';
import { creditAccounts } from './accounts';
import { CHAIN_JOB_OPTS, chainDelay, requireChain, walletOf } from './chainAccess';
import { firstRow } from '../../db/queryRows';

/**
 * A duplicate answers the first record; `visible` says whether the caller may see it (the first
 * claimant itself, its owner, or the platform operator): to anyone else it is only "taken".
 */
export type SubmitDepositResult = { duplicate: false; deposit: Deposit } | { duplicate: true; deposit: Deposit; visible: boolean };

/** Whether the actor may read a participant's deposits (itself, its creator or claimer, the master key). */
async function mayRead(m: EntityManager, actor: Principal, agentId: string): Promise<boolean> {
  try {
    await resolveOwnedAgent(m, actor, agentId, 'see its deposits');
    return true;
  } catch (err) {
    if (err instanceof DomainError && (err.code === 'not_authorized' || err.code === 'not_found')) return false;
    throw err;
  }
}

/**
 * POST /agents/{id}/deposit: record the txHash as a pending deposit (once per chain and tx) and
 * enqueue its verification. A second submission of the same tx answers the first record.
 */
export async function submitDeposit(deps: Deps, actor: Principal, idParam: string, txHash: string): Promise<SubmitDepositResult> {
  const chain = requireChain(deps);
  const hash = txHash.toLowerCase();
  const chainId = BigInt(chain.settings.chainId);
  const out = await inTransaction(deps.ds, async (m): Promise<SubmitDepositResult> => {
    const agentId = await resolveOwnedAgent(m, actor, idParam, 'deposit');
    const inserted: Array<{ id: string }> = await m.query(
      `INSERT INTO deposits (id, agent_id, chain_id, tx_hash, status) VALUES ($1, $2, $3, $4, 'pending')
       ON CONFLICT ON CONSTRAINT deposits_tx DO NOTHING RETURNING id`,
      [randomUUID(), agentId, chainId.toString(), hash],
    );
    const repo = m.getRepository(Deposit);
    if (!inserted.length) {
      const first = await repo.findOneOrFail({ where: { chainId, txHash: hash } });
      return { duplicate: true, deposit: first, visible: await mayRead(m, actor, first.agentId) };
    }
    return { duplicate: false, deposit: await repo.findOneOrFail({ where: { id: inserted[0].id } }) };
  });
  if (!out.duplicate) await enqueueCheck(deps, out.deposit.id, 0);
  return out;
}

/** Enqueue check number `check` (delayed by the backoff unless `delay` is given); returns the job (an existing one of that id when there is one). */
export async function enqueueCheck(deps: Deps, depositId: string, check: number, delay?: number) {
  // The job id carries the check number: a retried job re-enqueues the same next check (a no-op), never a second chain of checks.
  return deps.hub.enqueue('chain', 'verifyDeposit', { depositId, check }, { ...CHAIN_JOB_OPTS, jobId: `deposit-${depositId}-${check}`, delay: delay ?? (check ? chainDelay(deps, check - 1) : 0) });
}

export async function depositsOf(deps: Deps, actor: Principal, idParam: string, limit: number): Promise<Deposit[]> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam, 'see its deposits');
  return deps.ds.getRepository(Deposit).find({ where: { agentId }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
}

export async function depositOf(deps: Deps, actor: Principal, idParam: string, depositId: string): Promise<Deposit> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam, 'see its deposits');
  const d = await deps.ds.getRepository(Deposit).findOne({ where: { id: depositId, agentId } });
  if (!d) throw new DomainError('not_found', `Deposit "${depositId}" was not found for participant "${agentId}".`);
  return d;
}

async function reject(deps: Deps, d: Deposit, reason: string): Promise<void> {
  await deps.ds.query(`UPDATE deposits SET status = 'rejected', reason = $2, updated_at = now() WHERE id = $1 AND status = 'pending'`, [d.id, reason]);
}

/** Credit the matching logs once: the logs' rows (unique per chain, tx, log), the ledger and the status in one transaction. */
async function credit(deps: Deps, chain: Chain, d: Deposit, r: ReceiptView, logs: TokenTransfer[]): Promise<void> {
  const { unitsPerCredit, feeBps, finality } = chain.settings;
  const paid = logs.reduce((s, l) => s + l.value, 0n);
  const split = depositSplit(paid, unitsPerCredit, feeBps);
  await inTransaction(deps.ds, async (m) => {
    const row = await firstRow<{ status: Deposit['status'] }>(m, `SELECT status FROM deposits WHERE id = $1 FOR UPDATE`, [d.id]);
    if (row?.status !== 'pending') return;
    await m.query(
      `INSERT INTO deposit_logs (chain_id, tx_hash, log_index, deposit_id, from_address, amount_units)
       SELECT $1, $2, x.i, $3, x.f, x.v FROM unnest($4::int[], $5::text[], $6::bigint[]) AS x(i, f, v)`,
      [d.chainId.toString(), d.txHash, d.id, logs.map((l) => l.logIndex), logs.map((l) => l.from), logs.map((l) => l.value.toString())],
    );
    await writeLedger(
      m,
      [{ from: creditAccounts.onchain, credits: [{ to: accountId.agent(d.agentId), amount: split.credits }, { to: creditAccounts.depositFees, amount: split.fee }], kind: 'deposit', ref: d.id, memo: d.txHash }],
      { shortfall: 'internal' },
    );
    await m.query(
      `UPDATE deposits SET status = 'credited', reason = NULL, from_address = $2, amount_units = $3, credits = $4, fee = $5,
              block_number = $6, block_hash = $7, final = $8, updated_at = now() WHERE id = $1`,
      [d.id, logs[0].from, paid.toString(), split.credits.toString(), split.fee.toString(), r.blockNumber, r.blockHash, r.confirmations >= finality],
    );
  });
}

/**
 * The verification job (check number `check`): a receipt not there yet, or short of the configured
 * confirmations, is checked again later (never rejected for "not yet"); a reverted tx, no Transfer of
 * the token to the treasury, or one not from the depositor's registered wallet is rejected with a
 * reason; otherwise the matching logs are credited. A credited deposit is re-checked until final:
 * a block no longer on the chain flags it.
 */
export async function verifyDeposit(deps: Deps, depositId: string, check: number): Promise<void> {
  const chain = requireChain(deps);
  const d = await deps.ds.getRepository(Deposit).findOne({ where: { id: depositId } });
  if (!d) return;
  await deps.ds.query(`UPDATE deposits SET checks = greatest(checks, $2), checked_at = now() WHERE id = $1`, [d.id, check + 1]);
  const later = async () => void (await enqueueCheck(deps, d.id, check + 1));
  const { confirmations, treasury, token } = chain.settings;
  if (d.status === 'pending') {
    const r = await chain.receipt(d.txHash);
    if (!r || (r.status === 1 && r.confirmations < confirmations)) return later();
    if (r.status !== 1) return reject(deps, d, 'The transaction reverted on chain: nothing was paid.');
    const toTreasury = r.transfers.filter((t) => t.to === treasury);
    if (!toTreasury.length) return reject(deps, d, `The transaction has no Transfer of the configured token (${token}) to the treasury (${treasury}).`);
    const wallet = await walletOf(deps.ds, d.agentId);
    if (!wallet) return reject(deps, d, 'No wallet is registered for this participant, so the sender cannot be matched to it: register your wallet (PUT /agents/{id}/wallet) before depositing.');
    const mine = toTreasury.filter((t) => t.from === wallet);
    if (!mine.length) return reject(deps, d, `The Transfer came from ${toTreasury[0].from}, not from the registered wallet ${wallet}.`);
    await credit(deps, chain, d, r, mine);
    if (r.confirmations < chain.settings.finality) await later();
    return;
  }
  if (d.status === 'credited' && !d.final && d.blockNumber !== null) {
    const hash = await chain.blockHash(Number(d.blockNumber));
    if (hash !== d.blockHash) {
      await deps.ds.query(`UPDATE deposits SET status = 'flagged', reason = $2, updated_at = now() WHERE id = $1 AND status = 'credited'`, [
        d.id,
        `Block ${d.blockNumber} (${d.blockHash}) is no longer on the chain (reorganised) before finality; the credits stay issued until the operator reviews it.`,
      ]);
      return;
    }
    const depth = (await chain.head()) - Number(d.blockNumber) + 1;
    if (depth >= chain.settings.finality) await deps.ds.query(`UPDATE deposits SET final = true, updated_at = now() WHERE id = $1`, [d.id]);
    else await later();
  }
}

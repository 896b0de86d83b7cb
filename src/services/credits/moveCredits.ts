import type { TransferRow } from './rows';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { toNano } from '../../domain/money';
import { CreditTransfer } from '../../entities/credits';
import { DomainError } from '../../errors';
import { accountId, balanceOf, transfer } from '../ledger';
import { getAgent } from '../participants';
import { isMember } from '../workspaces';
import { resolveOwnedAgent } from '../access';
import { creditAccounts, type SpendType } from './accounts';
import { onceByKey, type Once } from '../idempotency';

/** A positive amount of credits in nano-units, or 400. */
export function nanoAmount(credits: number): bigint {
  const amount = toNano(credits);
  if (amount <= 0n) throw new DomainError('validation_failed', 'The amount must be at least one nano-credit (0.000000001).');
  return amount;
}

/** The ledger's refusal with the amount asked (spec: 409 insufficient_balance {balance, amount}). */
async function moving<T>(amount: bigint, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DomainError && err.code === 'insufficient_balance') {
      throw new DomainError(err.code, err.message, { ...err.details, amount });
    }
    throw err;
  }
}

function refuseMaster(actor: Principal, what: string): void {
  if (actor.isMaster) throw new DomainError('funds_move_forbidden', `The master key cannot ${what}: send the participant's own key.`);
}

/** A transfer as its sender sees it: the row and the sender's balance after it. */
export interface TransferRecord extends TransferRow {
  balance: bigint;
}

/** The participant a transfer names (id or nickname): someone else, who exists. */
async function recipientOf(m: EntityManager | Deps['ds'], actor: Principal, toAgent: string) {
  const to = await getAgent(m, toAgent);
  if (!to) throw new DomainError('not_found', `Participant "${toAgent}" was not found.`);
  if (to.id === actor.agentId) throw new DomainError('validation_failed', 'You cannot transfer credits to yourself.');
  return to;
}

/** A transfer's dry run (POST /agents/transfer with dryRun): who receives it, by nickname, and the sender's balance; nothing is written. */
export interface TransferQuote {
  toAgent: string;
  toNickname: string;
  amount: bigint;
  balance: bigint;
  affordable: boolean;
}

export async function quoteTransfer(deps: Deps, actor: Principal, p: { toAgent: string; amount: number }): Promise<TransferQuote> {
  refuseMaster(actor, 'move funds');
  const amount = nanoAmount(p.amount);
  const to = await recipientOf(deps.ds, actor, p.toAgent);
  const balance = (await balanceOf(deps.ds, accountId.agent(actor.agentId))) ?? 0n;
  return { toAgent: to.id, toNickname: to.nickname, amount, balance, affordable: balance >= amount };
}

/** POST /agents/transfer: the caller's credits to another participant (id or nickname), atomically. */
export async function transferCredits(
  deps: Deps,
  actor: Principal,
  p: { toAgent: string; amount: number; memo?: string | null; idempotencyKey?: string },
): Promise<Once<TransferRecord>> {
  refuseMaster(actor, 'move funds');
  const amount = nanoAmount(p.amount);
  const memo = p.memo ?? null;
  return inTransaction(deps.ds, (m) =>
    onceByKey(m, { participantId: actor.agentId, scope: '-', key: p.idempotencyKey, request: ['transfer', p.toAgent, amount, memo] }, async () => {
      const to = await recipientOf(m, actor, p.toAgent);
      const id = randomUUID();
      const { fromBalance } = await moving(amount, () =>
        transfer(m, { from: accountId.agent(actor.agentId), to: accountId.agent(to.id), amount, kind: 'transfer', ref: id, memo }),
      );
      const row = await m.getRepository(CreditTransfer).save({ id, fromAgent: actor.agentId, toAgent: to.id, amount, memo });
      return { id, fromAgent: row.fromAgent, toAgent: row.toAgent, amount, memo, createdAt: row.createdAt, balance: fromBalance };
    }),
  );
}

export type TransferDirection = 'in' | 'out' | 'all';

/** GET /agents/transfers: a participant's transfers, newest first. Who may name another participant: the route asks policies.credits. */
export async function listTransfers(deps: Deps, actor: Principal, p: { direction: TransferDirection; limit: number; agentId?: string }): Promise<CreditTransfer[]> {
  const who = p.agentId ?? actor.agentId;
  const q = deps.ds.getRepository(CreditTransfer).createQueryBuilder('t');
  if (p.direction === 'in') q.where('t.toAgent = :who', { who });
  else if (p.direction === 'out') q.where('t.fromAgent = :who', { who });
  else q.where('(t.toAgent = :who OR t.fromAgent = :who)', { who });
  return q.orderBy('t.createdAt', 'DESC').addOrderBy('t.id', 'DESC').take(p.limit).getMany();
}

export interface SpendRecord {
  id: string;
  agentId: string;
  amount: bigint;
  type: SpendType;
  reason: string;
  balance: bigint;
  createdAt: Date;
}

/**
 * POST /agents/{id}/spend: credits leave to the type's sink account (a ledger row on the agent's
 * history). tokens and purchase: by the participant itself or its creator; betting: the platform operator only
 * (the route asks policies.credits.requireMaySpend before this).
 */
export async function spendCredits(
  deps: Deps,
  actor: Principal,
  p: { idParam: string; amount: number; type: SpendType; reason: string; idempotencyKey?: string },
): Promise<Once<SpendRecord>> {
  const amount = nanoAmount(p.amount);
  if (p.type !== 'betting') refuseMaster(actor, `spend a participant's credits on ${p.type}`);
  return inTransaction(deps.ds, async (m) => {
    const agentId = await resolveOwnedAgent(m, actor, p.idParam, 'spend its credits');
    return onceByKey(m, { participantId: actor.agentId, scope: '-', key: p.idempotencyKey, request: ['spend', agentId, amount, p.type, p.reason] }, async () => {
      const id = randomUUID();
      const { fromBalance } = await moving(amount, () =>
        transfer(m, { from: accountId.agent(agentId), to: creditAccounts.spend(p.type), amount, kind: `spend:${p.type}`, ref: id, memo: p.reason }),
      );
      return { id, agentId, amount, type: p.type, reason: p.reason, balance: fromBalance, createdAt: deps.clock.now() };
    });
  });
}

export interface CreditRecord {
  agentId: string;
  amount: bigint;
  balance: bigint;
  issued: boolean;
}

/**
 * POST /agents/{id}/credit: the platform operator issues new credits; anyone else with manage moves
 * its own credits to a member of the workspace (409 when short). Idempotent by key per caller and workspace.
 */
export async function creditParticipant(
  deps: Deps,
  p: { callerId: string; isMaster: boolean; workspaceId: string | null; targetId: string; amount: number; reason?: string; idempotencyKey?: string },
): Promise<Once<CreditRecord>> {
  const amount = nanoAmount(p.amount);
  return inTransaction(deps.ds, (m: EntityManager) =>
    onceByKey(m, { participantId: p.callerId, scope: p.workspaceId ?? '-', key: p.idempotencyKey, request: ['credit', p.targetId, amount, p.reason ?? null] }, async () => {
      const target = await getAgent(m, p.targetId);
      if (!target || target.id !== p.targetId) throw new DomainError('not_found', `Participant "${p.targetId}" was not found.`);
      if (!p.isMaster) {
        if (!p.workspaceId || !(await isMember(m, p.workspaceId, target.id))) {
          throw new DomainError('not_found', `Participant "${p.targetId}" is not a member of this workspace.`);
        }
        if (target.id === p.callerId) {
          throw new DomainError(
            'conflict',
            'You cannot credit yourself. Credits come two ways: a USDC deposit from your registered wallet (POST /agents/{id}/deposit, see /api/guides/get-paid), or a credit from the platform operator or another manager of the workspace (POST /agents/{id}/credit).',
          );
        }
      }
      const from = p.isMaster ? accountId.issuance : accountId.agent(p.callerId);
      const { toBalance } = await moving(amount, () =>
        transfer(m, { from, to: accountId.agent(target.id), amount, kind: p.isMaster ? 'mint' : 'credit', ref: p.callerId, memo: p.reason ?? null }),
      );
      return { agentId: target.id, amount, balance: toBalance, issued: p.isMaster };
    }),
  );
}

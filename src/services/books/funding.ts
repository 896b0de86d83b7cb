/** Funding a book: who funded it with how much (market_funders), funding an unfunded book later, and the fund use case. */
import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { openBook as lmsrOpen } from '../../domain/lmsr';
import { formatCredits } from '../../domain/money';
import { conflict, DomainError } from '../../errors';
import { accountId, balanceOf, writeLedger } from '../ledger';
import { emitEvent } from '../events';
// The idempotency journal of money moves, by file: the credits area's index reaches lifecycle (and so books) through workspaces.
import { onceByKey, type Once } from '../idempotency';
import { findMarket, lockMarket, recordFunders, requireMarket, type MarketRow, type OpenBookInput } from './books';

/**
 * A book's funders with what each put in, first funder first (null: a deleted participant, whose
 * share goes to the treasury). A book with no recorded funding falls back to its funder_id.
 */
export async function fundersOf(m: EntityManager, mk: Pick<MarketRow, 'id' | 'funderId'>): Promise<Array<{ key: string | null; amount: bigint }>> {
  const rows: Array<{ agent_id: string | null; amount: string }> = await m.query(
    `SELECT agent_id, sum(amount)::text AS amount FROM market_funders WHERE market_id = $1 GROUP BY agent_id ORDER BY min(id)`,
    [mk.id],
  );
  return rows.length ? rows.map((r) => ({ key: r.agent_id, amount: BigInt(r.amount) })) : [{ key: mk.funderId, amount: 1n }];
}

/** Why a book opened (or stayed) without liquidity, and what funding it takes. */
export interface UnfundedBook {
  marketId: string;
  metricId: string;
  targetDate: string;
  branch: 'approved' | 'declined' | null;
  /** insufficient_balance: its funder could not pay; no_liquidity: its configured liquidity is 0. */
  reason: 'insufficient_balance' | 'no_liquidity';
  /** The subsidy it needs (nano). */
  needed: bigint;
  funderId: string | null;
}

/** A book opened by openBooks and what it cost its funder. */
export interface BookCost {
  marketId: string;
  metricId: string;
  targetDate: string;
  horizonEntry: string | null;
  branch: 'approved' | 'declined' | null;
  funded: boolean;
  /** Credits moved from the funder to the book's pool (nano; 0 when unfunded). */
  subsidy: bigint;
  /** The subsidy it was planned to open with (nano). */
  planned: bigint;
  /** Who pays (paid) its subsidy. */
  funderId: string | null;
}

/** What opening some books cost, and which stayed unfunded and why (matched to their inputs by metric, date and branch). */
export function costOfOpening(opened: readonly MarketRow[], inputs: readonly OpenBookInput[]): { books: BookCost[]; spent: bigint; unfunded: UnfundedBook[] } {
  const key = (metricId: string, targetDate: string, branch: string | null | undefined) => `${metricId}|${targetDate}|${branch ?? ''}`;
  const planned = new Map(inputs.map((i) => [key(i.metricId, i.period.targetDate, i.branch), i.liquidity]));
  const books = opened.map((mk) => ({
    marketId: mk.id,
    metricId: mk.metricId,
    targetDate: mk.targetDate,
    horizonEntry: mk.horizonEntry,
    branch: mk.branch,
    funded: mk.funded,
    subsidy: mk.funded ? mk.liquidity : 0n,
    planned: planned.get(key(mk.metricId, mk.targetDate, mk.branch)) ?? 0n,
    funderId: mk.funderId,
  }));
  const unfunded = books
    .filter((b) => !b.funded)
    .map((b): UnfundedBook => {
      const mk = opened.find((x) => x.id === b.marketId)!;
      const needed = b.planned;
      return { marketId: mk.id, metricId: mk.metricId, targetDate: mk.targetDate, branch: mk.branch, reason: needed > 0n ? 'insufficient_balance' : 'no_liquidity', needed, funderId: mk.funderId };
    });
  return { books, spent: books.reduce((s, b) => s + b.subsidy, 0n), unfunded };
}

/**
 * Fund a locked, open, unfunded book with `liquidity` from `funderId`: the pool is paid first (a
 * refusal, insufficient_balance, changes nothing), then the book opens where it was planned to
 * (its opened probability) and the funding is recorded. A funded book is refused (409): adding
 * liquidity to a live book is not offered.
 */
export async function fundLockedBook(m: EntityManager, mk: MarketRow, funderId: string, liquidity: bigint, now: Date): Promise<MarketRow> {
  if (mk.status !== 'open' || mk.closeReason !== null || (mk.tradingEndsAt !== null && mk.tradingEndsAt <= now)) {
    const state = mk.status === 'open' ? 'closed to trading' : mk.status;
    throw conflict(`This market is ${state}: only an open book can be funded.`, { status: mk.status });
  }
  if (mk.funded) {
    throw conflict(
      `This book is already funded (${formatCredits(mk.liquidity)} credits of liquidity); a funded book takes no more: adding liquidity would change how far each trade moves its price. Fund an unfunded book, or trade on this one.`,
      { liquidity: mk.liquidity },
    );
  }
  let book;
  try {
    book = lmsrOpen(liquidity, mk.openedProbability ?? 0.5);
  } catch (err) {
    if (err instanceof RangeError) throw new DomainError('validation_failed', `${formatCredits(liquidity)} credits is too little liquidity to open this book; send more.`);
    throw err;
  }
  await writeLedger(m, [{ from: accountId.agent(funderId), credits: [{ to: accountId.pool(mk.id), amount: liquidity }], kind: 'fund', ref: mk.id }]);
  await m.query(
    `UPDATE markets SET funded = true, liquidity = $2, b = $3, q_higher = $4, q_lower = $5, q0_higher = $4, q0_lower = $5, funder_id = $6, updated_at = $7 WHERE id = $1`,
    [mk.id, liquidity.toString(), book.b.toString(), book.qHigher.toString(), book.qLower.toString(), funderId, now],
  );
  await recordFunders(m, [{ marketId: mk.id, agentId: funderId, amount: liquidity }]);
  await emitEvent(m, mk.workspaceId, 'market:funded', { marketId: mk.id, metricName: mk.metricName, targetDate: mk.targetDate, funderId, liquidity });
  return { ...mk, funded: true, liquidity, b: book.b, qHigher: book.qHigher, qLower: book.qLower, q0Higher: book.qHigher, q0Lower: book.qLower, funderId };
}

export interface FundRecord {
  market: MarketRow;
  /** Credits the caller paid into the pool (nano). */
  subsidy: bigint;
  balance: bigint;
}

/**
 * POST /predictions/markets/{id}/fund: anyone with trade funds an unfunded open book with its own
 * credits; they come back with the pool's remainder at resolution (or void), pro rata among funders.
 * Idempotent by key per caller and workspace.
 */
export async function fundMarket(
  deps: Deps,
  p: { agentId: string; workspaceId: string; marketId: string; liquidity: bigint; idempotencyKey?: string },
): Promise<Once<FundRecord>> {
  return inTransaction(deps.ds, (m) =>
    onceByKey(m, { participantId: p.agentId, scope: p.workspaceId, key: p.idempotencyKey, request: ['fund', p.marketId, p.liquidity] }, async () => {
      requireMarket(await findMarket(m, p.workspaceId, p.marketId), p.marketId);
      const mk = requireMarket(await lockMarket(m, p.marketId), p.marketId);
      const market = await fundLockedBook(m, mk, p.agentId, p.liquidity, deps.clock.now());
      return { market, subsidy: p.liquidity, balance: (await balanceOf(m, accountId.agent(p.agentId))) ?? 0n };
    }),
  );
}

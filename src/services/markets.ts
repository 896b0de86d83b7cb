import type { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../errors';
import { consensusOf, MAX_P, MIN_P, openBook as lmsrOpen, probability, type BookState } from '../domain/lmsr';
import type { Period } from '../domain/horizons';
import { accountId, move, openAccount } from './ledger';
import { emitEvent } from './outbox';

export interface MarketRow {
  id: string;
  workspaceId: string;
  metricId: string;
  metricName: string;
  proposalId: string | null;
  branch: 'approved' | 'declined' | null;
  targetDate: string;
  granularity: string;
  periodStart: Date | null;
  periodEnd: Date | null;
  resolvesOn: string;
  horizonEntry: string | null;
  title: string | null;
  status: 'open' | 'closed' | 'resolved' | 'voided';
  rangeMin: number;
  rangeMax: number;
  funderId: string | null;
  funded: boolean;
  liquidity: bigint;
  b: bigint;
  qHigher: bigint;
  qLower: bigint;
  q0Higher: bigint;
  q0Lower: bigint;
  openedProbability: number | null;
  tradeCount: number;
  volume: bigint;
  lastTradeAt: Date | null;
  resolvedValue: number | null;
  resolvedAt: Date | null;
  settledEarly: boolean;
  closeReason: string | null;
  tradingEndsAt: Date | null;
  voidReason: string | null;
  createdAt: Date;
}

export const MARKET_SELECT = `SELECT mk.*, mt.name AS metric_name FROM markets mk JOIN metrics mt ON mt.id = mk.metric_id`;

export function rowToMarket(r: Record<string, any>): MarketRow { // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    metricId: r.metric_id,
    metricName: r.metric_name,
    proposalId: r.proposal_id,
    branch: r.branch,
    targetDate: r.target_date,
    granularity: r.granularity,
    periodStart: r.period_start,
    periodEnd: r.period_end,
    resolvesOn: r.resolves_on,
    horizonEntry: r.horizon_entry,
    title: r.title,
    status: r.status,
    rangeMin: r.range_min,
    rangeMax: r.range_max,
    funderId: r.funder_id,
    funded: r.funded,
    liquidity: BigInt(r.liquidity),
    b: BigInt(r.b),
    qHigher: BigInt(r.q_higher),
    qLower: BigInt(r.q_lower),
    q0Higher: BigInt(r.q0_higher),
    q0Lower: BigInt(r.q0_lower),
    openedProbability: r.opened_probability,
    tradeCount: r.trade_count,
    volume: BigInt(r.volume),
    lastTradeAt: r.last_trade_at,
    resolvedValue: r.resolved_value,
    resolvedAt: r.resolved_at,
    settledEarly: r.settled_early,
    closeReason: r.close_reason,
    tradingEndsAt: r.trading_ends_at,
    voidReason: r.void_reason,
    createdAt: r.created_at,
  };
}

export function bookOf(mk: MarketRow): BookState {
  return { qHigher: mk.qHigher, qLower: mk.qLower, b: mk.b };
}

/** p(higher), or null for a book with no liquidity (never read null as a value). */
export function marketProbability(mk: MarketRow): number | null {
  return mk.funded && mk.b > 0n ? probability(bookOf(mk)) : null;
}

export function marketConsensus(mk: MarketRow): number | null {
  const p = marketProbability(mk);
  return p === null ? null : consensusOf(p, mk.rangeMin, mk.rangeMax);
}

/** What listings show: open, conditional (a live proposal branch), closed, resolved, voided. */
export function displayStatus(mk: MarketRow, now: Date): 'open' | 'conditional' | 'closed' | 'resolved' | 'voided' {
  if (mk.status === 'resolved' || mk.status === 'voided') return mk.status;
  if (mk.status === 'closed' || mk.closeReason) return 'closed';
  if (mk.proposalId) return mk.tradingEndsAt && mk.tradingEndsAt <= now ? 'closed' : 'conditional';
  return 'open';
}

export async function findMarket(m: DataSource | EntityManager, workspaceId: string, id: string): Promise<MarketRow | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const rows = await m.query(`${MARKET_SELECT} WHERE mk.id = $1 AND mk.workspace_id = $2`, [id, workspaceId]);
  return rows.length ? rowToMarket(rows[0]) : null;
}

export async function lockMarket(m: EntityManager, id: string): Promise<MarketRow | null> {
  const rows = await m.query(`${MARKET_SELECT} WHERE mk.id = $1 FOR UPDATE OF mk`, [id]);
  return rows.length ? rowToMarket(rows[0]) : null;
}

export function requireMarket(mk: MarketRow | null, id: string): MarketRow {
  if (!mk) throw new ApiError('market_not_found', `Market "${id}" was not found in this workspace.`);
  return mk;
}

export interface OpenBookInput {
  workspaceId: string;
  metricId: string;
  period: Period;
  horizonEntry?: string | null;
  title?: string | null;
  proposalId?: string | null;
  branch?: 'approved' | 'declined' | null;
  tradingEndsAt?: Date | null;
  funderId: string;
  liquidity: bigint;
  /** Where the book opens, on the metric's scale (clamped into the range, then to [0.01, 0.99]). */
  opensAtValue: number | null;
  rangeMin: number;
  rangeMax: number;
}

export function openingProbability(value: number | null, rangeMin: number, rangeMax: number): number {
  if (value === null || !Number.isFinite(value)) return 0.5;
  const p = (value - rangeMin) / (rangeMax - rangeMin);
  return Math.min(MAX_P, Math.max(MIN_P, p));
}

/**
 * Open a book, moving its liquidity from the funder into the book's pool. A funder who cannot pay
 * leaves the book unfunded (consensus null, trades refused). Returns null when the live book for
 * that (metric, date, proposal, branch) already exists: spawning is idempotent.
 */
export async function openBook(m: EntityManager, input: OpenBookInput): Promise<MarketRow | null> {
  const p0 = openingProbability(input.opensAtValue, input.rangeMin, input.rangeMax);
  const rows = await m.query(
    `INSERT INTO markets (workspace_id, metric_id, proposal_id, branch, target_date, granularity, period_start, period_end, resolves_on,
                          horizon_entry, title, range_min, range_max, funder_id, opened_probability, trading_ends_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     ON CONFLICT (metric_id, target_date, coalesce(proposal_id, '00000000-0000-0000-0000-000000000000'::uuid), coalesce(branch, ''))
       WHERE status IN ('open','closed') DO NOTHING
     RETURNING id`,
    [
      input.workspaceId,
      input.metricId,
      input.proposalId ?? null,
      input.branch ?? null,
      input.period.targetDate,
      input.period.granularity,
      input.period.start,
      input.period.end,
      input.period.resolvesOn,
      input.horizonEntry ?? null,
      input.title ?? null,
      input.rangeMin,
      input.rangeMax,
      input.funderId,
      p0,
      input.tradingEndsAt ?? null,
    ],
  );
  if (!rows.length) return null;
  const id: string = rows[0].id;
  await openAccount(m, accountId.pool(id), 'pool');
  if (input.liquidity > 0n) {
    let funded = true;
    await m.query('SAVEPOINT fund_book');
    try {
      await move(m, { from: accountId.agent(input.funderId), to: accountId.pool(id), amount: input.liquidity, kind: 'fund', ref: id });
      await m.query('RELEASE SAVEPOINT fund_book');
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'insufficient_balance') throw err;
      await m.query('ROLLBACK TO SAVEPOINT fund_book');
      funded = false;
    }
    if (funded) {
      const book = lmsrOpen(input.liquidity, p0);
      await m.query(
        `UPDATE markets SET funded = true, liquidity = $2, b = $3, q_higher = $4, q_lower = $5, q0_higher = $4, q0_lower = $5 WHERE id = $1`,
        [id, input.liquidity.toString(), book.b.toString(), book.qHigher.toString(), book.qLower.toString()],
      );
    }
  }
  const created = rowToMarket((await m.query(`${MARKET_SELECT} WHERE mk.id = $1`, [id]))[0]);
  await emitEvent(m, input.workspaceId, 'market:created', {
    marketId: id,
    metricName: created.metricName,
    targetDate: created.targetDate,
    proposalId: created.proposalId,
    branch: created.branch,
    funded: created.funded,
  });
  return created;
}

export interface MarketFilter {
  metricId?: string;
  proposalId?: string;
  limit: number;
  statuses?: Array<MarketRow['status']>;
  baselineOnly?: boolean;
}

export async function listMarkets(m: DataSource | EntityManager, workspaceId: string, f: MarketFilter): Promise<MarketRow[]> {
  const where = ['mk.workspace_id = $1'];
  const args: unknown[] = [workspaceId];
  if (f.metricId) {
    args.push(f.metricId);
    where.push(`mk.metric_id::text = $${args.length}`);
  }
  if (f.proposalId) {
    args.push(f.proposalId);
    where.push(`mk.proposal_id::text = $${args.length}`);
  }
  if (f.baselineOnly) where.push('mk.proposal_id IS NULL');
  args.push(f.statuses ?? ['open', 'closed']);
  where.push(`mk.status = ANY($${args.length}::text[])`);
  args.push(f.limit);
  const rows = await m.query(
    `${MARKET_SELECT} WHERE ${where.join(' AND ')} ORDER BY mt.sort_order, mk.period_end NULLS LAST, mk.branch NULLS FIRST, mk.created_at LIMIT $${args.length}`,
    args,
  );
  return rows.map(rowToMarket);
}

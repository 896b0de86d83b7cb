import { queryPrepared } from '../../db/prepared';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { consensusOf, MAX_P, MIN_P, openBook as lmsrOpen, probability, type BookState } from '../../domain/lmsr';
import type { Period } from '../../domain/horizons';
import { accountId, lockAccounts, openAccounts, writeLedger, type Credit } from '../ledger';
import { writeEvents } from '../events';
import type { Row } from '../../db/rows';
import type { Market } from '../../entities/market';
import { firstRow, rows } from '../../db/queryRows';

/**
 * A book as every area reads it: the markets row (the entity's columns but the update time) with its
 * metric's name.
 */
export type MarketRow = Omit<Row<Market>, 'updatedAt'> & { metricName: string };

export const MARKET_SELECT = `SELECT mk.*, mt.name AS metric_name FROM markets mk JOIN metrics mt ON mt.id = mk.metric_id`;

/** A row of MARKET_SELECT as pg answers it (snake_case, int8 and numeric as strings): rowToMarket reads it. */
export type MarketRaw = Record<string, unknown>;

/**
 * The markets row reader, written out (not `rowReader(Market)`): it runs for every book of every trade
 * batch and builds one object shape with no per-column closures; typed by the entity, so a column the
 * entity gains and this does not read fails the typecheck.
 */
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
    settleReason: r.settle_reason ?? null,
    manual: r.manual ?? false,
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
  const row = await firstRow<MarketRaw>(m, `${MARKET_SELECT} WHERE mk.id = $1 AND mk.workspace_id = $2`, [id, workspaceId]);
  return row ? rowToMarket(row) : null;
}

/** `prepared`: a hot path's lock (the trade's), planned once per connection. */
/**
 * Books' one typed reader of market rows: `where` filters on `mk` (markets) and `mt` (its metric);
 * `order`, `limit` and `lock` (FOR UPDATE OF mk) as asked. Other areas read books through this
 * instead of pasting the select and mapping rows themselves.
 */
export async function readMarkets(
  m: DataSource | EntityManager,
  where: string,
  params: unknown[],
  opts: { order?: string; limit?: number; lock?: boolean } = {},
): Promise<MarketRow[]> {
  const sql = `${MARKET_SELECT} WHERE ${where}${opts.order ? ` ORDER BY ${opts.order}` : ''}${opts.limit ? ` LIMIT ${Math.trunc(opts.limit)}` : ''}${opts.lock ? ' FOR UPDATE OF mk' : ''}`;
  return (await rows<MarketRaw>(m, sql, params)).map(rowToMarket);
}

/** The statement that locks books in id order (the order every writer takes them in): $1 the ids. Composed into the trade batch's pipelined open. */
export const LOCK_BOOKS_SQL = `${MARKET_SELECT} WHERE mk.id = ANY($1::uuid[]) ORDER BY mk.id FOR UPDATE OF mk`;

/** Lock these books in id order. */
export async function lockMarketsById(m: EntityManager, ids: string[]): Promise<MarketRow[]> {
  return readMarkets(m, 'mk.id = ANY($1::uuid[])', [ids], { order: 'mk.id', lock: true });
}

/** A LATERAL join of one market row onto another area's statement (portfolio, profile): `on` filters `mk`; map each row with rowToMarket. */
export const marketLateral = (on: string): string => `JOIN LATERAL (${MARKET_SELECT} WHERE ${on}) sub ON true`;

export async function lockMarket(m: EntityManager, id: string, prepared = false): Promise<MarketRow | null> {
  const sql = `${MARKET_SELECT} WHERE mk.id = $1 FOR UPDATE OF mk`;
  const [row] = prepared ? await queryPrepared<MarketRaw>(m, sql, [id]) : await rows<MarketRaw>(m, sql, [id]);
  return row ? rowToMarket(row) : null;
}

export function requireMarket(mk: MarketRow | null, id: string): MarketRow {
  if (!mk) throw new DomainError('market_not_found', `Market "${id}" was not found in this workspace.`);
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
  /** For the market:created event; looked up when absent. */
  metricName?: string;
  /** Opened by hand, outside the horizon plan. */
  manual?: boolean;
}

export function openingProbability(value: number | null, rangeMin: number, rangeMax: number): number {
  if (value === null || !Number.isFinite(value)) return 0.5;
  const p = (value - rangeMin) / (rangeMax - rangeMin);
  return Math.min(MAX_P, Math.max(MIN_P, p));
}

/**
 * Open books, moving each one's liquidity from its funder into the book's pool. A funder who
 * cannot pay leaves that book unfunded (consensus null, trades refused). A book whose live
 * (metric, date, proposal, branch) already exists is skipped: spawning is idempotent. Batched:
 * a handful of statements however many books.
 */
export async function openBooks(m: EntityManager, inputs: OpenBookInput[]): Promise<MarketRow[]> {
  if (!inputs.length) return [];
  const plans = inputs.map((input) => {
    const p0 = openingProbability(input.opensAtValue, input.rangeMin, input.rangeMax);
    const book = input.liquidity > 0n ? lmsrOpen(input.liquidity, p0) : { b: 0n, qHigher: 0n, qLower: 0n };
    return { input, p0, book };
  });
  const col = <T>(f: (p: (typeof plans)[number]) => T) => plans.map(f);
  const opened: Array<Record<string, any>> = await m.query( // eslint-disable-line @typescript-eslint/no-explicit-any
    `INSERT INTO markets (workspace_id, metric_id, proposal_id, branch, target_date, granularity, period_start, period_end, resolves_on,
                          horizon_entry, title, range_min, range_max, funder_id, opened_probability, trading_ends_at,
                          funded, liquidity, b, q_higher, q_lower, q0_higher, q0_lower, manual)
     SELECT w, mt, pr, br, td, gr, ps, pe, ro, he, ti, rmin, rmax, fu, op, te, li > 0, li, bb, qh, ql, qh, ql, ma
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::text[],
                   $10::text[], $11::text[], $12::float8[], $13::float8[], $14::text[], $15::float8[], $16::timestamptz[],
                   $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[], $21::bool[])
            AS x(w, mt, pr, br, td, gr, ps, pe, ro, he, ti, rmin, rmax, fu, op, te, li, bb, qh, ql, ma)
     ON CONFLICT (metric_id, target_date, coalesce(proposal_id, '00000000-0000-0000-0000-000000000000'::uuid), coalesce(branch, ''))
       WHERE status IN ('open','closed') DO NOTHING
     RETURNING *`,
    [
      col((p) => p.input.workspaceId),
      col((p) => p.input.metricId),
      col((p) => p.input.proposalId ?? null),
      col((p) => p.input.branch ?? null),
      col((p) => p.input.period.targetDate),
      col((p) => p.input.period.granularity),
      col((p) => p.input.period.start),
      col((p) => p.input.period.end),
      col((p) => p.input.period.resolvesOn),
      col((p) => p.input.horizonEntry ?? null),
      col((p) => p.input.title ?? null),
      col((p) => p.input.rangeMin),
      col((p) => p.input.rangeMax),
      col((p) => p.input.funderId),
      col((p) => p.p0),
      col((p) => p.input.tradingEndsAt ?? null),
      col((p) => p.input.liquidity.toString()),
      col((p) => p.book.b.toString()),
      col((p) => p.book.qHigher.toString()),
      col((p) => p.book.qLower.toString()),
      col((p) => p.input.manual ?? false),
    ],
  );
  if (!opened.length) return [];
  const ids = opened.map((r) => r.id as string);
  await openAccounts(m, ids.map(accountId.pool), 'pool');

  // Fund per funder in one transfer; if that funder is short, fund book by book while it can.
  const unfunded = new Set<string>();
  const byFunder = new Map<string, Array<Record<string, any>>>(); // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const r of opened) if (BigInt(r.liquidity) > 0n) byFunder.set(r.funder_id, [...(byFunder.get(r.funder_id) ?? []), r]);
  // Several funders pay in several statements: their accounts are locked first, in one sorted one.
  if (byFunder.size > 1) await lockAccounts(m, [...byFunder.keys()].map(accountId.agent));
  for (const [funder, books] of byFunder) {
    const legs = books.map((r) => ({ to: accountId.pool(r.id), amount: BigInt(r.liquidity) }));
    if (await tryPay(m, accountId.agent(funder), legs, books[0].id)) continue;
    for (const leg of legs) if (!(await tryPay(m, accountId.agent(funder), [leg], leg.to.slice(5)))) unfunded.add(leg.to.slice(5));
  }
  if (unfunded.size) {
    await m.query(
      `UPDATE markets SET funded = false, liquidity = 0, b = 0, q_higher = 0, q_lower = 0, q0_higher = 0, q0_lower = 0 WHERE id = ANY($1::uuid[])`,
      [[...unfunded]],
    );
  }
  await recordFunders(m, opened.filter((r) => !unfunded.has(r.id)).map((r) => ({ marketId: r.id, agentId: r.funder_id, amount: BigInt(r.liquidity) })));
  const names = new Map<string, string>(inputs.filter((i) => i.metricName).map((i) => [i.metricId, i.metricName!]));
  const missing = [...new Set(opened.map((r) => r.metric_id as string).filter((id) => !names.has(id)))];
  if (missing.length) for (const r of await rows<{ id: string; name: string }>(m, `SELECT id, name FROM metrics WHERE id = ANY($1::uuid[])`, [missing])) names.set(r.id, r.name);
  const created = opened.map((r) => {
    const mk = rowToMarket({ ...r, metric_name: names.get(r.metric_id) });
    return unfunded.has(mk.id) ? { ...mk, funded: false, liquidity: 0n, b: 0n, qHigher: 0n, qLower: 0n, q0Higher: 0n, q0Lower: 0n } : mk;
  });
  await writeEvents(
    m,
    created.map((mk) => ({
      workspaceId: mk.workspaceId,
      type: 'market:created',
      data: { marketId: mk.id, metricName: mk.metricName, targetDate: mk.targetDate, proposalId: mk.proposalId, branch: mk.branch, funded: mk.funded },
    })),
  );
  return created;
}

/** Record fundings (one row each): the pool's remainder goes back to these funders pro rata at resolution and void. */
export async function recordFunders(m: EntityManager, rows: ReadonlyArray<{ marketId: string; agentId: string; amount: bigint }>): Promise<void> {
  const paid = rows.filter((r) => r.amount > 0n);
  if (!paid.length) return;
  await m.query(`INSERT INTO market_funders (market_id, agent_id, amount) SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[])`, [
    paid.map((r) => r.marketId),
    paid.map((r) => r.agentId),
    paid.map((r) => r.amount.toString()),
  ]);
}

/** One funding transfer; false when the funder is short (a refused ledger write changes nothing). */
async function tryPay(m: EntityManager, from: string, credits: Credit[], ref: string): Promise<boolean> {
  try {
    await writeLedger(m, [{ from, credits, kind: 'fund', ref }]);
    return true;
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== 'insufficient_balance') throw err;
    return false;
  }
}

export async function openBook(m: EntityManager, input: OpenBookInput): Promise<MarketRow | null> {
  return (await openBooks(m, [input]))[0] ?? null;
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
  const found = await rows<MarketRaw>(
    m,
    // Ended books newest resolution first (a metric page lists its latest results); live ones by horizon.
    `${MARKET_SELECT} WHERE ${where.join(' AND ')} ORDER BY mt.sort_order, mk.resolved_at DESC NULLS FIRST, mk.period_end NULLS LAST, mk.branch NULLS FIRST, mk.created_at LIMIT $${args.length}`,
    args,
  );
  return found.map(rowToMarket);
}

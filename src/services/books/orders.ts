import type { EntityManager } from 'typeorm';
import { probability, type Direction } from '../../domain/lmsr';
import { opposite, type Fill, type Wall } from '../../domain/orderBook';
import type { TradeSpec } from '../../domain/trading';
import type { OrderData, OrderStatus } from '../../domain/outcomes';
import { accountId, leg, ledgerFragment, ledgerOutcome, openAccounts, writeLedger, type Transfer } from '../ledger';
import { writeEvents, type PendingEvent } from '../events';
import { bookOf, type MarketRow } from './books';

/** The market's reserve account: every open order's unused reserve (kind pool: never negative). */
export const reserveAccount = (marketId: string) => `reserve:${marketId}`;

export type { OrderData, OrderStatus };

/** A resting order as the code reads it: OrderData's fields with amounts as bigint nano and instants as Dates. */
export interface OrderRow extends Omit<OrderData, 'priceNano' | 'shares' | 'filled' | 'spent' | 'reserve' | 'expiresAt' | 'createdAt' | 'updatedAt'> {
  priceNano: bigint;
  shares: bigint;
  filled: bigint;
  spent: bigint;
  reserve: bigint;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function rowToOrder(r: Record<string, any>): OrderRow { // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    id: r.id,
    marketId: r.market_id,
    workspaceId: r.workspace_id,
    agentId: r.agent_id,
    direction: r.direction,
    limit: r.limit_value,
    limitP: r.limit_p,
    priceNano: BigInt(r.price_nano),
    shares: BigInt(r.shares),
    filled: BigInt(r.filled),
    spent: BigInt(r.spent),
    reserve: BigInt(r.reserve),
    status: r.status,
    closeReason: r.close_reason,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function orderData(o: OrderRow): OrderData {
  return {
    ...o,
    priceNano: o.priceNano.toString(),
    shares: o.shares.toString(),
    filled: o.filled.toString(),
    spent: o.spent.toString(),
    reserve: o.reserve.toString(),
    expiresAt: o.expiresAt ? o.expiresAt.toISOString() : null,
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
}

export function orderOfData(d: OrderData): OrderRow {
  return {
    ...d,
    priceNano: BigInt(d.priceNano),
    shares: BigInt(d.shares),
    filled: BigInt(d.filled),
    spent: BigInt(d.spent),
    reserve: BigInt(d.reserve),
    expiresAt: d.expiresAt === null ? null : new Date(d.expiresAt),
    createdAt: new Date(d.createdAt),
    updatedAt: new Date(d.updatedAt),
  };
}

/**
 * The side a buy takes and the probability it may not pass (null: none), as planTrade will see
 * them; null for a sell (sells trade with the market maker only).
 */
export function wallQuery(mk: MarketRow, spec: TradeSpec): { wallSide: Direction; bound: number | null } | null {
  if (spec.mode === 'sell' || !mk.funded || mk.b <= 0n) return null;
  const span = mk.rangeMax - mk.rangeMin;
  const lim = spec.limit === undefined ? null : (spec.limit - mk.rangeMin) / span;
  let dir: Direction;
  let bound = lim;
  if (spec.mode === 'buy') dir = spec.direction;
  else {
    const t = (spec.targetValue - mk.rangeMin) / span;
    dir = spec.direction ?? (t > probability(bookOf(mk)) ? 'higher' : 'lower');
    bound = lim === null ? t : dir === 'higher' ? Math.min(t, lim) : Math.max(t, lim);
  }
  return { wallSide: opposite(dir), bound };
}

/** SQL (a scalar subquery) of the open walls a buy meets, nearest first; parameters: market, wall side, bound, now. */
export function wallsSql(market: string, side: string, bound: string, now: string): string {
  return `(SELECT coalesce(json_agg(w), '[]'::json) FROM (
            SELECT id, agent_id, direction, limit_p, price_nano::text, (shares - filled)::text AS remaining, (filled - immediate)::text AS filled, seq::float8 AS seq
              FROM limit_orders
             WHERE market_id = ${market} AND status = 'open' AND direction = ${side}::text
               AND (expires_at IS NULL OR expires_at > ${now}::timestamptz)
               AND (${bound}::float8 IS NULL OR CASE WHEN ${side}::text = 'higher' THEN limit_p >= ${bound}::float8 ELSE limit_p <= ${bound}::float8 END)
             ORDER BY CASE WHEN ${side}::text = 'higher' THEN -limit_p ELSE limit_p END, seq
             LIMIT 500) w)`;
}

export function wallsOf(json: unknown): Wall[] {
  const rows = (json ?? []) as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  return rows.map((r) => ({
    id: r.id,
    agentId: r.agent_id,
    direction: r.direction,
    p: r.limit_p,
    priceNano: BigInt(r.price_nano),
    remaining: BigInt(r.remaining),
    filled: BigInt(r.filled),
    seq: r.seq,
  }));
}

/**
 * The resting orders' side of a trade's fills, before the trade's own write in the same
 * transaction: each order's part moves from the reserve to the pool, owners (other than the taker,
 * whose holding the trade writes) get their shares, redeem matched pairs, and an order whose size
 * is reached is closed with any unused reserve returned. Locks the taker's account with the others,
 * in id order, so the trade's write that follows waits for nothing new.
 */
export async function applyFills(m: EntityManager, mk: MarketRow, fills: readonly Fill[], takerId: string, p: number, now: Date): Promise<void> {
  if (!fills.length) return;
  const byOrder = new Map<string, { shares: bigint; pay: bigint }>();
  for (const f of fills) {
    const o = byOrder.get(f.orderId) ?? { shares: 0n, pay: 0n };
    byOrder.set(f.orderId, { shares: o.shares + f.shares, pay: o.pay + f.ownerPay });
  }
  const ids = [...byOrder.keys()];
  const orders: Array<Record<string, any>> = await m.query( // eslint-disable-line @typescript-eslint/no-explicit-any
    `WITH u AS (
       UPDATE limit_orders o SET filled = o.filled + v.s, spent = o.spent + v.pay, reserve = o.reserve - v.pay,
              status = CASE WHEN o.filled + v.s >= o.shares THEN 'filled' ELSE 'open' END, updated_at = $4
         FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS v(id, s, pay)
        WHERE o.id = v.id
        RETURNING o.id, o.agent_id, o.direction, o.shares::text AS shares, o.filled::text AS filled, o.reserve::text AS reserve, o.status)
     SELECT * FROM u`,
    [ids, ids.map((i) => byOrder.get(i)!.shares.toString()), ids.map((i) => byOrder.get(i)!.pay.toString()), now],
  );
  const reserve = reserveAccount(mk.id);
  const pool = accountId.pool(mk.id);
  const ledger: Transfer[] = [leg(reserve, pool, fills.reduce((s, f) => s + f.ownerPay, 0n), 'order_fill', mk.id)];
  const events: PendingEvent[] = [];
  const done: string[] = [];
  for (const o of orders) {
    const f = byOrder.get(o.id)!;
    events.push({
      workspaceId: mk.workspaceId,
      type: 'order:filled',
      data: { orderId: o.id, marketId: mk.id, agentId: o.agent_id, direction: o.direction, shares: f.shares, cost: f.pay, filled: BigInt(o.filled), size: BigInt(o.shares), complete: o.status === 'filled' },
    });
    if (o.status === 'filled') {
      done.push(o.id);
      if (BigInt(o.reserve) > 0n) ledger.push(leg(reserve, accountId.agent(o.agent_id), BigInt(o.reserve), 'order_refund', o.id));
    }
  }
  if (done.length) await m.query(`UPDATE limit_orders SET reserve = 0 WHERE id = ANY($1::uuid[])`, [done]);

  // Owners' positions (the taker's own fills count in the trade's holding instead).
  const owners = new Map<string, { higher: bigint; lower: bigint; cost: bigint }>();
  for (const f of fills) {
    if (f.agentId === takerId) continue;
    const o = owners.get(f.agentId) ?? { higher: 0n, lower: 0n, cost: 0n };
    o[f.direction] += f.shares;
    o.cost += f.ownerPay;
    owners.set(f.agentId, o);
  }
  const agents = [...owners.keys()];
  if (agents.length) {
    const held: Array<{ agent_id: string; shares_higher: string; shares_lower: string }> = await m.query(
      `SELECT agent_id, shares_higher, shares_lower FROM positions WHERE market_id = $1 AND agent_id = ANY($2::text[])`,
      [mk.id, agents],
    );
    const prior = new Map(held.map((h) => [h.agent_id, { higher: BigInt(h.shares_higher), lower: BigInt(h.shares_lower) }]));
    const rows = agents.map((a) => {
      const add = owners.get(a)!;
      const h = prior.get(a) ?? { higher: 0n, lower: 0n };
      const hi = h.higher + add.higher;
      const lo = h.lower + add.lower;
      const redeem = hi < lo ? hi : lo;
      if (redeem > 0n) ledger.push(leg(pool, accountId.agent(a), redeem, 'redeem', mk.id));
      return { a, hi: hi - redeem, lo: lo - redeem, net: add.cost - redeem, add };
    });
    await m.query(
      `INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost, updated_at)
       SELECT $1, x.a, $2, x.hi, x.lo, x.net, $3 FROM unnest($4::text[], $5::bigint[], $6::bigint[], $7::bigint[]) AS x(a, hi, lo, net)
       ON CONFLICT (market_id, agent_id) DO UPDATE SET shares_higher = EXCLUDED.shares_higher, shares_lower = EXCLUDED.shares_lower,
              net_cost = positions.net_cost + EXCLUDED.net_cost, updated_at = EXCLUDED.updated_at`,
      [mk.id, mk.workspaceId, now, agents, rows.map((r) => r.hi.toString()), rows.map((r) => r.lo.toString()), rows.map((r) => r.net.toString())],
    );
  }
  // The owners' fills in the trade history (a buy at the order's price; the book did not move).
  await m.query(
    `INSERT INTO trades (id, request_id, market_id, workspace_id, agent_id, kind, direction, shares, cost, probability_before, probability_after, consensus_before, consensus_after, created_at)
     SELECT gen_random_uuid(), 'order:' || x.o, $1, $2, x.a, 'buy', x.d, x.s, x.c, $3, $3, $4, $4, $5
       FROM unnest($6::text[], $7::text[], $8::text[], $9::bigint[], $10::bigint[]) AS x(o, a, d, s, c)`,
    [mk.id, mk.workspaceId, p, mk.rangeMin + p * (mk.rangeMax - mk.rangeMin), now, fills.map((f) => f.orderId), fills.map((f) => f.agentId), fills.map((f) => f.direction), fills.map((f) => f.shares.toString()), fills.map((f) => f.ownerPay.toString())],
  );
  const f = ledgerFragment(ledger, 1, { touch: [accountId.agent(takerId)] });
  const [row] = await m.query(`WITH ${f.ctes} SELECT ${f.outcome}`, f.params);
  ledgerOutcome(f, row, 'internal');
  await writeEvents(m, events);
}

/**
 * SQL (a set of account ids) of every account a fill of these books' resting orders can touch besides
 * the taker's and the pool: the books' reserve accounts and the open orders' owners (`accountId.agent`,
 * `reserveAccount`). Exact while the caller holds the books' row locks: orders are placed, cancelled and
 * filled only under their book's lock. Parameter: the books' ids (uuid[]).
 */
export function fillAccountsSql(markets: string): string {
  return `SELECT v.id FROM limit_orders o, LATERAL (VALUES ('agent:' || o.agent_id), ('reserve:' || o.market_id::text)) AS v(id)
           WHERE o.market_id = ANY(${markets}::uuid[]) AND o.status = 'open'`;
}

/** Close the open orders whose `by` is among `ids`, in one statement: each row with the reserve it held. */
async function closeOpen(m: EntityManager, by: 'market_id' | 'id', ids: readonly string[], status: 'cancelled' | 'expired', reason: string, now: Date): Promise<Array<Record<string, any>>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (!ids.length) return [];
  return m.query(
    `WITH u AS (UPDATE limit_orders o SET status = $2, close_reason = $3, reserve = 0, updated_at = $4
       FROM (SELECT id, reserve FROM limit_orders WHERE ${by} = ANY($1::uuid[]) AND status = 'open' FOR UPDATE) prev
      WHERE o.id = prev.id
      RETURNING o.id, o.market_id, o.workspace_id, o.agent_id, prev.reserve::text AS returned) SELECT * FROM u`,
    [ids, status, reason, now],
  );
}

/**
 * Close every open order of these markets (resolution, void, close, decision, deletion) and
 * return the reserves, in the caller's transaction. `batch`: add the ledger legs to the caller's
 * batch instead of writing them here.
 */
export async function closeOrdersOf(m: EntityManager, marketIds: readonly string[], status: 'cancelled' | 'expired', reason: string, now: Date, batch?: Transfer[]): Promise<number> {
  return releaseReserves(m, await closeOpen(m, 'market_id', marketIds, status, reason, now), status, reason, batch);
}

/** Close these open orders (cancellation or expiry), returning their reserves. */
export async function closeOrders(m: EntityManager, orderIds: readonly string[], status: 'cancelled' | 'expired', reason: string, now: Date): Promise<Array<Record<string, any>>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const rows = await closeOpen(m, 'id', orderIds, status, reason, now);
  await releaseReserves(m, rows, status, reason);
  return rows;
}

async function releaseReserves(m: EntityManager, rows: Array<Record<string, any>>, status: 'cancelled' | 'expired', reason: string, batch?: Transfer[]): Promise<number> { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (!rows.length) return 0;
  const legs = rows.filter((r) => BigInt(r.returned) > 0n).map((r) => leg(reserveAccount(r.market_id), accountId.agent(r.agent_id), BigInt(r.returned), 'order_refund', r.id));
  if (batch) batch.push(...legs);
  else await writeLedger(m, legs, { shortfall: 'internal' });
  await writeEvents(
    m,
    rows.map((r) => ({ workspaceId: r.workspace_id, type: status === 'cancelled' ? 'order:cancelled' : 'order:expired', data: { orderId: r.id, marketId: r.market_id, agentId: r.agent_id, returned: BigInt(r.returned), reason } })),
  );
  return rows.length;
}

export async function openReserve(m: EntityManager, marketId: string): Promise<void> {
  await openAccounts(m, [reserveAccount(marketId)], 'pool');
}

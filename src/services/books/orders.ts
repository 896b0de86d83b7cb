import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { probability, type Direction } from '../../domain/lmsr';
import { opposite, type Fill, type Wall } from '../../domain/orderBook';
import type { TradeSpec } from '../../domain/trading';
import type { OrderData, OrderStatus } from '../../domain/outcomes';
import { accountId, leg, openAccounts, writeLedger, type Transfer } from '../ledger';
import { writeEvents, type PendingEvent } from '../events';
import { bookOf, type MarketRow } from './books';
import { rows } from '../../db/queryRows';

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

/** An open resting order of a locked book, as a trade batch keeps it in memory (amounts nano). */
export interface OpenOrder {
  id: string;
  marketId: string;
  agentId: string;
  direction: Direction;
  p: number;
  priceNano: bigint;
  shares: bigint;
  filled: bigint;
  immediate: bigint;
  spent: bigint;
  reserve: bigint;
  seq: number;
  expiresAt: Date | null;
  status: 'open' | 'filled';
}

/** SQL (a scalar subquery, json) of the open orders of these books ($ parameter: uuid[]), for `openOrdersOf`. */
export function openOrdersSql(markets: string): string {
  return `(SELECT coalesce(json_agg(o ORDER BY o.seq), '[]'::json) FROM (
            SELECT id, market_id, agent_id, direction, limit_p, price_nano::text, shares::text, filled::text, immediate::text, spent::text, reserve::text,
                   seq::float8 AS seq, expires_at
              FROM limit_orders WHERE market_id = ANY(${markets}::uuid[]) AND status = 'open') o)`;
}

export function openOrdersOf(json: unknown): OpenOrder[] {
  const rows = (json ?? []) as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  return rows.map((r) => ({
    id: r.id,
    marketId: r.market_id,
    agentId: r.agent_id,
    direction: r.direction,
    p: r.limit_p,
    priceNano: BigInt(r.price_nano),
    shares: BigInt(r.shares),
    filled: BigInt(r.filled),
    immediate: BigInt(r.immediate),
    spent: BigInt(r.spent),
    reserve: BigInt(r.reserve),
    seq: r.seq,
    expiresAt: r.expires_at ? new Date(r.expires_at) : null,
    status: 'open',
  }));
}

/**
 * The walls a buy meets among a book's open orders: open, on its side, not expired, within its
 * bound, nearest first (then oldest), at most 500.
 */
export function wallsFrom(orders: readonly OpenOrder[], side: Direction, bound: number | null, now: Date): Wall[] {
  return orders
    .filter((o) => o.status === 'open' && o.direction === side && (!o.expiresAt || o.expiresAt > now) && (bound === null || (side === 'higher' ? o.p >= bound : o.p <= bound)))
    .sort((a, b) => (side === 'higher' ? b.p - a.p : a.p - b.p) || a.seq - b.seq)
    .slice(0, 500)
    .map((o) => ({ id: o.id, agentId: o.agentId, direction: o.direction, p: o.p, priceNano: o.priceNano, remaining: o.shares - o.filled, filled: o.filled - o.immediate, seq: o.seq }));
}

/** A trades row (the history), amounts nano. */
export interface TradeRowData {
  id: string;
  requestId: string;
  marketId: string;
  workspaceId: string;
  agentId: string;
  kind: 'buy' | 'sell' | 'redeem';
  direction: Direction | null;
  shares: bigint;
  cost: bigint;
  probabilityBefore: number;
  probabilityAfter: number;
  consensusBefore: number;
  consensusAfter: number;
  createdAt: Date;
}

/** What the resting orders' side of a trade's fills changes, decided in memory (`fillEffects`). */
export interface FillEffects {
  /** The filled orders as they stand after (copies). */
  orders: OpenOrder[];
  ledger: Transfer[];
  events: PendingEvent[];
  /** Owners' positions after (absolute shares) and what their net cost moves by. */
  positions: Array<{ agentId: string; higher: bigint; lower: bigint; netCost: bigint }>;
  trades: TradeRowData[];
}

/**
 * The resting orders' side of a trade's fills: each order's part moves from the reserve to the
 * pool, owners (other than the taker, whose holding the trade writes) get their shares and redeem
 * matched pairs, and an order whose size is reached is closed with any unused reserve returned.
 * Pure: `orders` and `holding` are the book's state before the fills; the caller applies the effects.
 */
export function fillEffects(
  mk: MarketRow,
  fills: readonly Fill[],
  takerId: string,
  p: number,
  now: Date,
  orderOf: (id: string) => OpenOrder,
  holdingOf: (agentId: string) => { higher: bigint; lower: bigint },
): FillEffects {
  const byOrder = new Map<string, { shares: bigint; pay: bigint }>();
  for (const f of fills) {
    const o = byOrder.get(f.orderId) ?? { shares: 0n, pay: 0n };
    byOrder.set(f.orderId, { shares: o.shares + f.shares, pay: o.pay + f.ownerPay });
  }
  const reserve = reserveAccount(mk.id);
  const pool = accountId.pool(mk.id);
  const ledger: Transfer[] = [leg(reserve, pool, fills.reduce((s, f) => s + f.ownerPay, 0n), 'order_fill', mk.id)];
  const events: PendingEvent[] = [];
  const orders: OpenOrder[] = [];
  for (const [id, f] of byOrder) {
    const before = orderOf(id);
    const o: OpenOrder = { ...before, filled: before.filled + f.shares, spent: before.spent + f.pay, reserve: before.reserve - f.pay };
    o.status = o.filled >= o.shares ? 'filled' : 'open';
    events.push({
      workspaceId: mk.workspaceId,
      type: 'order:filled',
      data: { orderId: o.id, marketId: mk.id, agentId: o.agentId, direction: o.direction, shares: f.shares, cost: f.pay, filled: o.filled, size: o.shares, complete: o.status === 'filled' },
    });
    if (o.status === 'filled') {
      if (o.reserve > 0n) ledger.push(leg(reserve, accountId.agent(o.agentId), o.reserve, 'order_refund', o.id));
      o.reserve = 0n;
    }
    orders.push(o);
  }
  // Owners' positions (the taker's own fills count in the trade's holding instead).
  const owners = new Map<string, { higher: bigint; lower: bigint; cost: bigint }>();
  for (const f of fills) {
    if (f.agentId === takerId) continue;
    const o = owners.get(f.agentId) ?? { higher: 0n, lower: 0n, cost: 0n };
    o[f.direction] += f.shares;
    o.cost += f.ownerPay;
    owners.set(f.agentId, o);
  }
  const positions = [...owners].map(([agentId, add]) => {
    const h = holdingOf(agentId);
    const hi = h.higher + add.higher;
    const lo = h.lower + add.lower;
    const redeem = hi < lo ? hi : lo;
    if (redeem > 0n) ledger.push(leg(pool, accountId.agent(agentId), redeem, 'redeem', mk.id));
    return { agentId, higher: hi - redeem, lower: lo - redeem, netCost: add.cost - redeem };
  });
  // The owners' fills in the trade history (a buy at the order's price; the book did not move).
  const c = mk.rangeMin + p * (mk.rangeMax - mk.rangeMin);
  const trades: TradeRowData[] = fills.map((f) => ({
    id: randomUUID(),
    requestId: `order:${f.orderId}`,
    marketId: mk.id,
    workspaceId: mk.workspaceId,
    agentId: f.agentId,
    kind: 'buy',
    direction: f.direction,
    shares: f.shares,
    cost: f.ownerPay,
    probabilityBefore: p,
    probabilityAfter: p,
    consensusBefore: c,
    consensusAfter: c,
    createdAt: now,
  }));
  return { orders, ledger, events, positions, trades };
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
/** An order closed by closeOpen: `returned` is the reserve it held (int8, as text). */
export interface ClosedOrder {
  id: string;
  market_id: string;
  workspace_id: string;
  agent_id: string;
  returned: string;
}

async function closeOpen(m: EntityManager, by: 'market_id' | 'id', ids: readonly string[], status: 'cancelled' | 'expired', reason: string, now: Date): Promise<ClosedOrder[]> {
  if (!ids.length) return [];
  return rows<ClosedOrder>(
    m,
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
export async function closeOrders(m: EntityManager, orderIds: readonly string[], status: 'cancelled' | 'expired', reason: string, now: Date): Promise<ClosedOrder[]> {
  const closed = await closeOpen(m, 'id', orderIds, status, reason, now);
  await releaseReserves(m, closed, status, reason);
  return closed;
}

async function releaseReserves(m: EntityManager, closed: ClosedOrder[], status: 'cancelled' | 'expired', reason: string, batch?: Transfer[]): Promise<number> {
  if (!closed.length) return 0;
  const legs = closed.filter((r) => BigInt(r.returned) > 0n).map((r) => leg(reserveAccount(r.market_id), accountId.agent(r.agent_id), BigInt(r.returned), 'order_refund', r.id));
  if (batch) batch.push(...legs);
  else await writeLedger(m, legs, { shortfall: 'internal' });
  await writeEvents(
    m,
    closed.map((r) => ({ workspaceId: r.workspace_id, type: status === 'cancelled' ? 'order:cancelled' : 'order:expired', data: { orderId: r.id, marketId: r.market_id, agentId: r.agent_id, returned: BigInt(r.returned), reason } })),
  );
  return closed.length;
}

export async function openReserve(m: EntityManager, marketId: string): Promise<void> {
  await openAccounts(m, [reserveAccount(marketId)], 'pool');
}

import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { rowToOrder, type OrderRow, type OrderStatus } from './orders';
import { firstRow, rows } from '../../db/queryRows';

/** The caller's orders, newest first; by market and status when asked. */
export async function ordersOf(deps: Deps, p: { agentId: string; workspaceId: string; marketId?: string; status?: OrderStatus; limit: number }): Promise<OrderRow[]> {
  const found = await rows<Record<string, unknown>>(
    deps.ds,
    `SELECT * FROM limit_orders WHERE agent_id = $1 AND workspace_id = $2 AND ($3::uuid IS NULL OR market_id = $3) AND ($4::text IS NULL OR status = $4)
      ORDER BY seq DESC LIMIT $5`,
    [p.agentId, p.workspaceId, p.marketId ?? null, p.status ?? null, p.limit],
  );
  return found.map(rowToOrder);
}

export async function orderOf(deps: Deps, p: { agentId: string; workspaceId: string; orderId: string }): Promise<OrderRow> {
  const row = await firstRow<Record<string, unknown>>(deps.ds, `SELECT * FROM limit_orders WHERE id = $1 AND agent_id = $2 AND workspace_id = $3`, [p.orderId, p.agentId, p.workspaceId]);
  if (!row) throw new DomainError('order_not_found', `Order "${p.orderId}" was not found.`);
  return rowToOrder(row);
}

export interface BookLevel {
  limit: number;
  probability: number;
  /** Nano-units. */
  shares: bigint;
  orders: number;
}

/** The resting walls of a market by price, aggregated (no owners): buy-higher bids and buy-lower bids. */
export async function orderBookOf(deps: Deps, marketId: string) {
  const rows: Array<{ direction: 'higher' | 'lower'; limit_value: number; limit_p: number; shares: string; orders: number }> = await deps.ds.query(
    `SELECT direction, limit_value, limit_p, sum(shares - filled)::text AS shares, count(*)::int AS orders
       FROM limit_orders WHERE market_id = $1 AND status = 'open' AND (expires_at IS NULL OR expires_at > $2)
      GROUP BY direction, limit_value, limit_p ORDER BY direction, limit_p DESC`,
    [marketId, deps.clock.now()],
  );
  const level = (r: (typeof rows)[number]): BookLevel => ({ limit: r.limit_value, probability: r.limit_p, shares: BigInt(r.shares), orders: r.orders });
  return { marketId, higher: rows.filter((r) => r.direction === 'higher').map(level), lower: rows.filter((r) => r.direction === 'lower').map(level) };
}

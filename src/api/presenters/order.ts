import { z } from 'zod';
import { orderOfData, type BookLevel, type OrderRow } from '../../services/books';
import type { OrderCancelled, OrderPlacement, Outcome } from '../../services/trading';
import { credits, isPresented } from './trade';

/** Every output field of a limit order (credits as numbers, dates as ISO strings). */
export const orderSchema = z.object({
  id: z.string(),
  marketId: z.string(),
  direction: z.enum(['higher', 'lower']),
  limit: z.number(),
  probability: z.number(),
  price: z.number(),
  shares: z.number(),
  filled: z.number(),
  remaining: z.number(),
  spent: z.number(),
  reserved: z.number(),
  status: z.enum(['open', 'filled', 'cancelled', 'expired']),
  closeReason: z.string().nullable(),
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const limitFillSchema = z.object({ orderId: z.string(), shares: z.number(), price: z.number(), cost: z.number() });

export function presentOrder(o: OrderRow): z.infer<typeof orderSchema> {
  return {
    id: o.id,
    marketId: o.marketId,
    direction: o.direction,
    limit: o.limit,
    probability: o.limitP,
    price: credits(o.priceNano),
    shares: credits(o.shares),
    filled: credits(o.filled),
    remaining: credits(o.shares - o.filled),
    spent: credits(o.spent),
    reserved: credits(o.reserve),
    status: o.status,
    closeReason: o.closeReason,
    expiresAt: o.expiresAt ? o.expiresAt.toISOString() : null,
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
}

/** A placement: the same for the first answer and an idempotent replay (stored data, or a placement stored before it). */
export function presentPlacement(o: Outcome<OrderPlacement> & { ok: true; replay?: true }) {
  const p = o.body;
  if (isPresented(p)) return { ...(p as unknown as Record<string, unknown>), idempotentReplay: o.replay === true };
  // Added to presentOrder's object, not spread into a new one (see presentTradeOutcome).
  return Object.assign(presentOrder(orderOfData(p.order)), {
    immediate: { shares: credits(p.immediate.shares), cost: credits(p.immediate.cost), tradeId: p.immediate.tradeId },
    idempotentReplay: o.replay === true,
  });
}

export function presentCancelled(c: OrderCancelled) {
  return isPresented(c) ? (c as unknown as Record<string, unknown>) : Object.assign(presentOrder(orderOfData(c.order)), { returned: credits(c.returned) });
}

const level = (l: BookLevel) => ({ limit: l.limit, probability: l.probability, shares: credits(l.shares), orders: l.orders });

export function presentOrderBook(b: { marketId: string; higher: BookLevel[]; lower: BookLevel[] }) {
  return { marketId: b.marketId, higher: b.higher.map(level), lower: b.lower.map(level) };
}

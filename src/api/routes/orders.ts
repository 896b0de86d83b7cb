import { z } from 'zod';
import { DomainError } from '../../errors';
import { policies } from '../../services/access';
import { toNano } from '../../domain/money';
import { bodyHash, submitCancelOrder, submitOrder } from '../../services/trading';
import { orderBookOf, orderOf, ordersOf } from '../../services/books';
import { orderSchema, presentCancelled, presentOrder, presentOrderBook, presentPlacement } from '../presenters/order';
import { defineRoute } from '../registry';
import { idempotencyKey } from '../idempotency';
import { limitQuery, positiveCredits, positiveShares } from '../schemas/common';
import { marketRef, readableMarket, resolveTradeMarket } from './markets';

const orderIdParam = z.object({ id: z.string().uuid('must be an order id (UUID)') });

const placeBody = marketRef
  .extend({
    direction: z.enum(['higher', 'lower'], { error: "must be 'higher' or 'lower'" }),
    limit: z.number({ error: 'must be a number on the consensus scale' }),
    amount: positiveCredits.optional(),
    shares: positiveShares.optional(),
    expiresAt: z.string().datetime({ offset: true, message: 'must be an ISO date-time' }).optional(),
  })
  .refine((b) => (b.amount === undefined) !== (b.shares === undefined), { message: 'send exactly one of amount (credits) or shares' });

const placed = orderSchema.extend({
  immediate: z.object({ shares: z.number(), cost: z.number(), tradeId: z.string().nullable() }),
  idempotentReplay: z.boolean(),
});

export const postPredictionsOrders = defineRoute({
  method: 'POST',
  path: '/predictions/orders',
  idempotent: true,
  auth: policies.orders.create,
  summary: 'Place a resting limit buy order { marketId (or metricId/metricName + targetDate, + proposalId and branch), direction, limit (consensus scale), amount or shares, expiresAt? }; a crossed limit fills against the book first. Idempotency-Key header.',
  body: placeBody,
  response: placed,
  errors: ['market_not_found', 'market_closed', 'market_resolved', 'market_voided', 'market_unfunded', 'proposal_closed', 'insufficient_balance', 'trade_too_small', 'idempotency_key_reuse', 'order_pending', 'not_authorized'],
  handler: async (c) => {
    const caller = c.identity();
    const access = c.workspace();
    // Named as on POST /predictions/trade: marketId, or metric + targetDate (+ proposalId, branch).
    const mk = await resolveTradeMarket(c, access.workspace.id);
    access.requireMetricTradable(mk);
    const key = idempotencyKey(c);
    const o = await submitOrder(c.deps, {
      agentId: caller.agentId,
      workspaceId: access.workspace.id,
      marketId: mk.id,
      direction: c.body.direction,
      limit: c.body.limit,
      amount: c.body.amount === undefined ? undefined : toNano(c.body.amount),
      shares: c.body.shares === undefined ? undefined : toNano(c.body.shares),
      expiresAt: c.body.expiresAt ? new Date(c.body.expiresAt) : undefined,
      idempotencyKey: key,
      hash: bodyHash({ path: '/predictions/orders', body: c.body }),
    });
    if (!o.ok) throw DomainError.fromBody(o.body);
    return presentPlacement(o);
  },
});

export const getPredictionsOrders = defineRoute({
  method: 'GET',
  path: '/predictions/orders',
  auth: policies.orders.list,
  summary: 'Your limit orders, newest first. Query marketId, status (open|filled|cancelled|expired), limit.',
  query: z.object({ marketId: z.string().uuid().optional(), status: z.enum(['open', 'filled', 'cancelled', 'expired']).optional(), limit: limitQuery(50, 500) }),
  response: z.array(orderSchema),
  errors: [],
  handler: async (c) => {
    const rows = await ordersOf(c.deps, { agentId: c.identity().agentId, workspaceId: c.workspace().workspace.id, ...c.query });
    return rows.map(presentOrder);
  },
});

export const getPredictionsOrdersById = defineRoute({
  method: 'GET',
  path: '/predictions/orders/:id',
  auth: policies.orders.read,
  summary: 'One of your limit orders.',
  params: orderIdParam,
  response: orderSchema,
  errors: ['order_not_found'],
  handler: async (c) => presentOrder(await orderOf(c.deps, { agentId: c.identity().agentId, workspaceId: c.workspace().workspace.id, orderId: c.params.id })),
});

export const deletePredictionsOrdersById = defineRoute({
  method: 'DELETE',
  path: '/predictions/orders/:id',
  auth: policies.orders.remove,
  summary: 'Cancel one of your open limit orders; its unused reserve comes back.',
  params: orderIdParam,
  response: orderSchema.extend({ returned: z.number() }),
  errors: ['order_not_found', 'order_not_open', 'order_pending'],
  handler: async (c) => {
    const o = await submitCancelOrder(c.deps, { agentId: c.identity().agentId, workspaceId: c.workspace().workspace.id, orderId: c.params.id });
    if (!o.ok) throw DomainError.fromBody(o.body);
    return presentCancelled(o.body);
  },
});

const level = z.object({ limit: z.number(), probability: z.number(), shares: z.number(), orders: z.number() });

export const getPredictionsMarketsByIdOrderbook = defineRoute({
  method: 'GET',
  path: '/predictions/markets/:id/orderbook',
  auth: policies.orders.readOrderbook,
  summary: 'The resting walls of a market by price, aggregated (no owners): buy-higher and buy-lower.',
  params: z.object({ id: z.string().uuid('must be a market id (UUID)') }),
  response: z.object({ marketId: z.string(), higher: z.array(level), lower: z.array(level) }),
  errors: ['market_not_found'],
  handler: async (c) => {
    const mk = await readableMarket(c, c.params.id);
    return presentOrderBook(await orderBookOf(c.deps, mk.id));
  },
});

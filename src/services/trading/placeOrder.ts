import { hash as digest, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { queueFamilies } from '../../../jobs/definitions';
import type { Deps } from '../../deps';
import { DomainError, idempotencyKeyReuse } from '../../errors';
import { inTransaction, pgCode } from '../../db/tx';
import { firstRow } from '../../db/queryRows';
import { NANO, probability, probabilityOf, type Direction } from '../../domain/lmsr';
import { ownerPriceNano, reserveFor } from '../../domain/orderBook';
import { accountId, leg, writeLedger } from '../ledger';
import { emitEvent } from '../events';
import { bookOf, lockMarket } from '../books';
import { checkTradable } from '../../domain/trading';
import { executeTrade } from './applyTrade';
import { replayIfSameRequest } from './tradeRequests';
import type { Outcome, OrderCancelled, OrderPlacement } from '../../domain/outcomes';
import { closeOrders, insertLimitOrder, openReserve, orderData, rowToOrder, setPlacement } from '../books';

export type PlaceOrderJob = z.infer<typeof queueFamilies.trade.jobs.placeOrder>;
export type CancelOrderJob = z.infer<typeof queueFamilies.trade.jobs.cancelOrder>;

const ORDER_JOB_OPTS = { attempts: 3, backoff: { type: 'exponential', delay: 50 } } as const;

/** The limit as p(higher), strictly inside (0, 1): an order at an end of the range could never fill. */
export function orderProbability(limit: number, rangeMin: number, rangeMax: number): number {
  const p = probabilityOf(limit, rangeMin, rangeMax);
  if (!(p > 0 && p < 1)) throw new DomainError('validation_failed', `A limit order's limit must lie strictly inside the market's range (${rangeMin} to ${rangeMax}), got ${limit}.`);
  return p;
}

/**
 * The lane's side of placing: ONE transaction on the locked book. A limit the book has already
 * crossed first buys against the book (and any walls in the way) up to the limit, as a trade of
 * the owner's; what is left rests, its worst-case cost moved into the market's reserve account.
 * A job that runs twice returns the first placement.
 */
export async function applyPlaceOrder(deps: Deps, job: PlaceOrderJob): Promise<Outcome<OrderPlacement>> {
  try {
    return await inTransaction(deps.ds, async (m) => {
      const mk = await lockMarket(m, job.marketId);
      const prior = await firstRow<{ placement: OrderPlacement }>(m, `SELECT placement FROM limit_orders WHERE id = $1`, [job.orderId]);
      if (prior) return { ok: true, body: prior.placement };
      if (!mk || mk.workspaceId !== job.workspaceId) throw new DomainError('market_not_found', `Market "${job.marketId}" was not found in this workspace.`);
      const now = deps.clock.now();
      checkTradable(mk, now, false);
      const dir = job.direction as Direction;
      const p = orderProbability(job.limit, mk.rangeMin, mk.rangeMax);
      const priceNano = ownerPriceNano(dir, p);
      const size = job.shares !== undefined ? BigInt(job.shares) : (BigInt(job.amount!) * NANO) / priceNano;
      if (size <= 0n) throw new DomainError('trade_too_small', 'The order is too small: it buys no share at its limit.', { minimum: 0.000001 });
      let immediate = { shares: 0n, cost: 0n, tradeId: null as string | null };
      const p0 = probability(bookOf(mk));
      if (dir === 'higher' ? p0 < p : p0 > p) {
        // Crossed: buy now against the book, up to the limit, with the order's budget.
        const budget = job.amount !== undefined ? BigInt(job.amount) : reserveFor(size, priceNano);
        await m.query('SAVEPOINT order_cross');
        try {
          await executeTrade(m, deps, { requestId: `order:${job.orderId}`, agentId: job.agentId, workspaceId: job.workspaceId, marketId: mk.id, spec: { mode: 'buy', direction: dir, amount: budget.toString(), limit: job.limit } });
          await m.query('RELEASE SAVEPOINT order_cross');
          const t = await firstRow<{ id: string; shares: string; cost: string }>(m, `SELECT id, shares::text, cost::text FROM trades WHERE request_id = $1 AND kind = 'buy'`, [`order:${job.orderId}`]);
          if (t) immediate = { shares: BigInt(t.shares), cost: BigInt(t.cost), tradeId: t.id };
        } catch (err) {
          if (!(err instanceof DomainError) || !['trade_too_small', 'price_moved'].includes(err.code)) throw err;
          await m.query('ROLLBACK TO SAVEPOINT order_cross');
        }
      }
      const rest = size > immediate.shares ? size - immediate.shares : 0n;
      const reserve = reserveFor(rest, priceNano);
      const shares = immediate.shares + rest;
      if (reserve > 0n) {
        await openReserve(m, mk.id);
        await writeLedger(m, [leg(accountId.agent(job.agentId), `reserve:${mk.id}`, reserve, 'order_reserve', job.orderId)]);
      }
      const row = await insertLimitOrder(m, [job.orderId, mk.id, mk.workspaceId, job.agentId, dir, job.limit, p, priceNano.toString(), shares.toString(), immediate.shares.toString(), immediate.cost.toString(),
          reserve.toString(), rest > 0n ? 'open' : 'filled', job.expiresAt ?? null, job.idempotencyKey ?? null, job.bodyHash ?? null, now]);
      const order = rowToOrder(row);
      const body: OrderPlacement = { v: 2, order: orderData(order), immediate: { shares: immediate.shares.toString(), cost: immediate.cost.toString(), tradeId: immediate.tradeId } };
      await setPlacement(m, order.id, body);
      await emitEvent(m, mk.workspaceId, 'order:placed', { orderId: order.id, marketId: mk.id, agentId: job.agentId, direction: dir, limit: job.limit, shares, immediate: immediate.shares });
      return { ok: true, body };
    });
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { ok: false, body: err.toBody() };
  }
}

/** The lane's side of a cancel: the owner's open order closed, its unused reserve returned. */
export async function applyCancelOrder(deps: Deps, job: CancelOrderJob): Promise<Outcome<OrderCancelled>> {
  try {
    return await inTransaction(deps.ds, async (m) => {
      await lockMarket(m, job.marketId);
      const row = await firstRow<Record<string, unknown> & { status: string; reserve: string }>(m, `SELECT * FROM limit_orders WHERE id = $1 AND agent_id = $2 AND workspace_id = $3`, [job.orderId, job.agentId, job.workspaceId]);
      if (!row) throw new DomainError('order_not_found', `Order "${job.orderId}" was not found.`);
      if (row.status !== 'open') throw new DomainError('order_not_open', `Order "${job.orderId}" is ${row.status}.`, { status: row.status });
      await closeOrders(m, [job.orderId], 'cancelled', 'cancelled by its owner', deps.clock.now());
      const after = await firstRow<Record<string, unknown>>(m, `SELECT * FROM limit_orders WHERE id = $1`, [job.orderId]);
      return { ok: true, body: { v: 2, order: orderData(rowToOrder(after!)), returned: String(row.reserve) } };
    });
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { ok: false, body: err.toBody() };
  }
}

/** A delayed expiry job (or the sweep): closes the order if it is still open and due. */
export async function applyExpireOrder(deps: Deps, job: { orderId: string; marketId: string }): Promise<{ expired: boolean }> {
  return inTransaction(deps.ds, async (m) => {
    await lockMarket(m, job.marketId);
    const now = deps.clock.now();
    const due = await firstRow<{ id: string }>(m, `SELECT id FROM limit_orders WHERE id = $1 AND status = 'open' AND expires_at <= $2`, [job.orderId, now]);
    if (!due) return { expired: false };
    await closeOrders(m, [job.orderId], 'expired', 'expired', now);
    return { expired: true };
  });
}

/** The sweep for expiry jobs that were lost: every open order past its time, on its lane. */
export async function expireDueOrders(deps: Deps, limit = 500): Promise<number> {
  const rows: Array<{ id: string; market_id: string }> = await deps.ds.query(
    `SELECT id, market_id FROM limit_orders WHERE status = 'open' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
    [deps.clock.now(), limit],
  );
  let n = 0;
  for (const r of rows) if ((await applyExpireOrder(deps, { orderId: r.id, marketId: r.market_id })).expired) n++;
  return n;
}

function outcomeOf<T>(waited: { finished: true; result: Outcome<T> } | { finished: false }, what: string): Outcome<T> {
  if (!waited.finished) throw new DomainError('order_pending', `The ${what} is queued but its outcome is not known yet; retry (with the same Idempotency-Key) to get it.`);
  return waited.result;
}

/**
 * The API's side of placing: a replay of an Idempotency-Key returns the first placement (the key
 * is scoped to participant and workspace, and picks the order id, so twins become one job); then
 * the job runs on the market's lane and its expiry is scheduled as a delayed job there.
 */
export async function submitOrder(
  deps: Deps,
  p: { agentId: string; workspaceId: string; marketId: string; direction: Direction; limit: number; shares?: bigint; amount?: bigint; expiresAt?: Date; idempotencyKey?: string; hash: string },
): Promise<Outcome<OrderPlacement> & { replay?: true }> {
  if (p.expiresAt && p.expiresAt <= deps.clock.now()) throw new DomainError('validation_failed', 'expiresAt must be in the future.');
  if (p.idempotencyKey) {
    const r = await firstRow<{ body_hash: string | null; placement: OrderPlacement }>(deps.ds, `SELECT body_hash, placement FROM limit_orders WHERE agent_id = $1 AND workspace_id = $2 AND idempotency_key = $3`, [p.agentId, p.workspaceId, p.idempotencyKey]);
    if (r) return replayIfSameRequest({ bodyHash: r.body_hash }, p.hash, () => ({ ok: true, body: r.placement, replay: true }));
  }
  const orderId = p.idempotencyKey ? uuidOf(`${p.agentId}|${p.workspaceId}|${p.idempotencyKey}|${p.hash}`) : randomUUID();
  const job: PlaceOrderJob = {
    orderId,
    agentId: p.agentId,
    workspaceId: p.workspaceId,
    marketId: p.marketId,
    direction: p.direction,
    limit: p.limit,
    shares: p.shares?.toString(),
    amount: p.amount?.toString(),
    expiresAt: p.expiresAt?.toISOString(),
    idempotencyKey: p.idempotencyKey,
    bodyHash: p.idempotencyKey ? p.hash : undefined,
  };
  let o: Outcome<OrderPlacement>;
  try {
    o = outcomeOf<OrderPlacement>(await deps.hub.enqueueAndWait('trade', 'placeOrder', job, { jobId: `order-${orderId}`, laneKey: p.marketId, ...ORDER_JOB_OPTS, waitMs: deps.config.TRADE_WAIT_MS }), 'order');
  } catch (err) {
    if (pgCode(err) === '23505') throw idempotencyKeyReuse();
    throw err;
  }
  if (o.ok && p.expiresAt && o.body.v === 2 && o.body.order.status === 'open') {
    const delay = Math.max(0, p.expiresAt.getTime() - deps.clock.now().getTime());
    await deps.hub.enqueue('trade', 'expireOrder', { orderId, marketId: p.marketId }, { jobId: `expire-${orderId}`, laneKey: p.marketId, delay, ...ORDER_JOB_OPTS }).catch(() => undefined); // the sweep covers a lost one
  }
  return o;
}

export async function submitCancelOrder(deps: Deps, p: { agentId: string; workspaceId: string; orderId: string }): Promise<Outcome<OrderCancelled>> {
  const r = await firstRow<{ market_id: string }>(deps.ds, `SELECT market_id FROM limit_orders WHERE id = $1 AND agent_id = $2 AND workspace_id = $3`, [p.orderId, p.agentId, p.workspaceId]);
  if (!r) throw new DomainError('order_not_found', `Order "${p.orderId}" was not found.`);
  const job: CancelOrderJob = { ...p, marketId: r.market_id };
  return outcomeOf<OrderCancelled>(await deps.hub.enqueueAndWait('trade', 'cancelOrder', job, { jobId: `cancel-${p.orderId}-${randomUUID()}`, laneKey: r.market_id, ...ORDER_JOB_OPTS, waitMs: deps.config.TRADE_WAIT_MS }), 'cancel');
}

function uuidOf(s: string): string {
  const h = digest('sha256', s, 'hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

import type { EntityManager } from 'typeorm';
import { rows } from '../../db/queryRows';

/**
 * Books owns `markets` and `limit_orders` (src/services/tables.ts): every write to them is here or in
 * this area's other files. Lifecycle, proposals and trading call these or compose the fragments.
 */

/** Mark a book resolved; `with` is a CTE (and its params, numbered from $6) riding on the same statement. */
export async function markResolved(
  m: EntityManager,
  id: string,
  value: number,
  now: Date,
  early: { settledEarly: boolean; reason: string | null },
  with_: { cte: string; params: unknown[] },
): Promise<void> {
  await m.query(
    `WITH ${with_.cte} UPDATE markets SET status = 'resolved', resolved_value = $2, resolved_at = $3, settled_early = $4, settle_reason = $5, updated_at = $3 WHERE id = $1`,
    [id, value, now, early.settledEarly, early.reason, ...with_.params],
  );
}

export async function markVoided(m: EntityManager, id: string, reason: string, now: Date): Promise<void> {
  await m.query(`UPDATE markets SET status = 'voided', void_reason = $2, resolved_at = $3, updated_at = $3 WHERE id = $1`, [id, reason, now]);
}

/** Close books to buys for a reason ('deactivated', 'proposal_closed'); their orders are the caller's next step. */
export async function setCloseReason(m: EntityManager, ids: string[], reason: 'deactivated' | 'proposal_closed', now: Date): Promise<void> {
  await m.query(`UPDATE markets SET close_reason = $3, updated_at = $2 WHERE id = ANY($1::uuid[])`, [ids, now, reason]);
}

/**
 * The trade batch's CTEs on books' tables, composed into its one statement (the hot path keeps its
 * statement count). Parameters $1..$6 are the markets' columns, $7..$12 the orders'; `ok` gates on the ledger.
 */
export const tradeBookCtes = (ok: string): string => `mu AS (
         UPDATE markets mk SET q_higher = x.qh, q_lower = x.ql, trade_count = mk.trade_count + x.n, volume = mk.volume + x.vol, last_trade_at = x.at, updated_at = x.at
           FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::int[], $5::bigint[], $6::timestamptz[]) AS x(id, qh, ql, n, vol, at)
          WHERE mk.id = x.id AND ${ok}),
       lo AS (
         UPDATE limit_orders o SET filled = x.f, spent = x.sp, reserve = x.r, status = x.st, updated_at = x.at
           FROM unnest($7::uuid[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], $12::timestamptz[]) AS x(id, f, sp, r, st, at)
          WHERE o.id = x.id AND ${ok})`;

/** A new limit order's row (its values in the column order below), returned as stored. */
export async function insertLimitOrder(m: EntityManager, values: unknown[]): Promise<Record<string, unknown>> {
  const [row] = await rows<Record<string, unknown>>(
    m,
    `INSERT INTO limit_orders (id, market_id, workspace_id, agent_id, direction, limit_value, limit_p, price_nano, shares, filled, immediate, spent, reserve, status,
                               expires_at, idempotency_key, body_hash, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $14, $15, $16, $17, $17) RETURNING *`,
    values,
  );
  return row;
}

/** The placement answer stored on the order (replayed for a repeated Idempotency-Key). */
export async function setPlacement(m: EntityManager, id: string, body: unknown): Promise<void> {
  await m.query(`UPDATE limit_orders SET placement = $2 WHERE id = $1`, [id, JSON.stringify(body)]);
}

import { hash as digest } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { idempotencyKeyReuse } from '../../errors';
import { rows } from '../../db/queryRows';

/**
 * The Idempotency-Key of every money write. Its rules are this file's: the body hash (`requestHash`)
 * and the one check of a key already held (`replayIfSameRequest`), used by all three places a key is
 * held. Where it is held depends on whether the move has a durable row of its own that must carry
 * the key in the same statement:
 * - `money_requests` (below, `onceByKey`): transfers, credits, spending, withdrawals, which have none;
 * - `trade_requests`, the trade lanes' journal (services/trading): the key sits on the request's
 *   journal row, written inside the batch's one statement and read by recovery (see docs/decisions.md,
 *   "Money, the ledger and idempotency");
 * - `limit_orders`: the key sits on the order it placed (the order id is derived from it).
 *
 * For money_requests: a key is scoped to the participant and a scope (a workspace id, or '-' where
 * the move has none); its row is written in the move's own transaction, so a move and its key commit
 * together, and a refused move (a rolled-back transaction) does not consume its key. A concurrent
 * twin waits on the key's row lock and then replays the first outcome.
 */
export interface MoneyKey {
  participantId: string;
  scope: string;
  /** Absent: the move is not idempotent by key (it runs). */
  key?: string;
  /** The operation and its body: the same key with another body answers idempotency_key_reuse. */
  request: unknown;
}

export interface Once<T> {
  value: T;
  replay: boolean;
}

export function requestHash(request: unknown): string {
  return digest('sha256', JSON.stringify(request, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)), 'hex');
}

/** bigint and Date survive the JSON round trip of a stored outcome. */
function encode(value: unknown): unknown {
  if (typeof value === 'bigint') return { $bigint: value.toString() };
  if (value instanceof Date) return { $date: value.toISOString() };
  if (Array.isArray(value)) return value.map(encode);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
  return value;
}
function decode(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decode);
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.$bigint === 'string' && Object.keys(o).length === 1) return BigInt(o.$bigint);
    if (typeof o.$date === 'string' && Object.keys(o).length === 1) return new Date(o.$date);
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, decode(v)]));
  }
  return value;
}

/**
 * The one check of a key another request already holds: the same body replays the holder's outcome,
 * another body is refused (idempotency_key_reuse, 409). Returns the holder's outcome as given.
 */
export function replayIfSameRequest<T>(held: { bodyHash: string | null }, hash: string, outcome: () => T): T {
  if (held.bodyHash !== hash) throw idempotencyKeyReuse();
  return outcome();
}

/** Run `move` at most once per key, inside the caller's transaction `m`; a replay returns the stored outcome. */
export async function onceByKey<T>(m: EntityManager, k: MoneyKey, move: () => Promise<T>): Promise<Once<T>> {
  if (!k.key) return { value: await move(), replay: false };
  const hash = requestHash(k.request);
  // Claim the key first: a twin's uncommitted claim makes this insert wait, then conflict (it committed) or proceed (it rolled back).
  const claimed: unknown[] = await m.query(
    `INSERT INTO money_requests (participant_id, scope, idempotency_key, body_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [k.participantId, k.scope, k.key, hash],
  );
  if (!claimed.length) {
    const [row] = await rows<{ body_hash: string | null; outcome: unknown }>(m, `SELECT body_hash, outcome FROM money_requests WHERE participant_id = $1 AND scope = $2 AND idempotency_key = $3`, [k.participantId, k.scope, k.key]);
    return replayIfSameRequest({ bodyHash: row.body_hash }, hash, () => ({ value: decode(row.outcome) as T, replay: true }));
  }
  const value = await move();
  await m.query(`UPDATE money_requests SET outcome = $4 WHERE participant_id = $1 AND scope = $2 AND idempotency_key = $3`, [
    k.participantId,
    k.scope,
    k.key,
    JSON.stringify(encode(value)),
  ]);
  return { value, replay: false };
}

/**
 * Which errors are infrastructure blips rather than refusals: pure classification of Postgres
 * driver errors, shared by the transaction helper (what to retry) and the API (what answers 503).
 */

const RETRYABLE = new Set(['40001', '40P01']); // serialization failure, deadlock: the transaction rolled back

export function pgCode(err: unknown): string | undefined {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}

/** A serialization failure or a deadlock: Postgres rolled the transaction back; running it again may succeed. */
export function isSerializationFailure(err: unknown): boolean {
  return RETRYABLE.has(pgCode(err) ?? '');
}

/** Postgres codes and driver messages that mean the connection, not the statement, failed. */
const LOST_CODES = /^(08...|57P0[123]|53300)$/; // connection exception, admin shutdown / crash / cannot connect now, too many connections
const LOST_MESSAGES = /Connection terminated|connection is closed|Connection is not established|ECONNREFUSED|ECONNRESET|EPIPE|timeout exceeded when trying to connect|Client has encountered a connection error|terminating connection|not queryable/i;
// TypeORM lets go of a query runner whose connection died; the transaction's next statement then says so.
const RELEASED_RUNNER = new Set(['QueryRunnerProviderAlreadyReleasedError', 'QueryRunnerAlreadyReleasedError']);

/** True when the error is an infrastructure blip (a dropped Postgres connection), not a refusal. */
export function isConnectionLoss(err: unknown): boolean {
  const code = pgCode(err);
  if (code && LOST_CODES.test(code)) return true;
  if (RELEASED_RUNNER.has((err as Error)?.name) || RELEASED_RUNNER.has((err as Error)?.constructor?.name)) return true;
  return LOST_MESSAGES.test((err as Error)?.message ?? '');
}

/** True when retrying the whole request is safe and may succeed: a blip, a serialization failure or a deadlock. */
export function isTransient(err: unknown): boolean {
  return isSerializationFailure(err) || isConnectionLoss(err);
}

/** Redis (ioredis / BullMQ) connection failures: the queue, not the request, is at fault. */
const QUEUE_LOST = /Connection is closed|connect ECONNREFUSED|Stream isn't writeable|MaxRetriesPerRequestError|Reached the max retries per request/i;

export function isQueueLoss(err: unknown): boolean {
  return QUEUE_LOST.test((err as Error)?.message ?? '');
}

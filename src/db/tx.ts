import type { DataSource, EntityManager } from 'typeorm';

const RETRYABLE = new Set(['40001', '40P01']); // serialization failure, deadlock: the transaction rolled back

export function pgCode(err: unknown): string | undefined {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}

/** Postgres codes and driver messages that mean the connection, not the statement, failed. */
const LOST_CODES = /^(08...|57P0[123]|53300)$/; // connection exception, admin shutdown / crash / cannot connect now, too many connections
const LOST_MESSAGES = /Connection terminated|connection is closed|Connection is not established|ECONNREFUSED|ECONNRESET|EPIPE|timeout exceeded when trying to connect|Client has encountered a connection error|terminating connection/i;

/** True when the error is an infrastructure blip (a dropped Postgres connection), not a refusal. */
export function isConnectionLoss(err: unknown): boolean {
  const code = pgCode(err);
  if (code && LOST_CODES.test(code)) return true;
  return LOST_MESSAGES.test((err as Error)?.message ?? '');
}

/** True when retrying the whole request is safe and may succeed: a blip, a serialization failure or a deadlock. */
export function isTransient(err: unknown): boolean {
  return RETRYABLE.has(pgCode(err) ?? '') || isConnectionLoss(err);
}

/**
 * Run fn in one transaction, retried on serialization failures and deadlocks, and on a lost
 * connection before COMMIT was sent (the server rolled the work back). A connection lost during
 * COMMIT is not retried here: the outcome is unknown, so the error goes up (the API answers 503
 * service_unavailable; idempotent callers retry with their key).
 */
export async function inTransaction<T>(
  ds: DataSource,
  fn: (m: EntityManager) => Promise<T>,
  opts: { attempts?: number; isolation?: 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE' } = {},
): Promise<T> {
  const attempts = opts.attempts ?? 5;
  for (let i = 1; ; i++) {
    const qr = ds.createQueryRunner();
    let committing = false;
    try {
      await qr.connect();
      await qr.startTransaction(opts.isolation);
      const out = await fn(qr.manager);
      committing = true;
      await qr.commitTransaction();
      return out;
    } catch (err) {
      if (qr.isTransactionActive && !committing) await qr.rollbackTransaction().catch(() => undefined);
      const retry = i < attempts && (RETRYABLE.has(pgCode(err) ?? '') || (!committing && isConnectionLoss(err)));
      if (!retry) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 20));
    } finally {
      await qr.release().catch(() => undefined);
    }
  }
}

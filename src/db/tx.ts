import type { DataSource, EntityManager } from 'typeorm';
import { isConnectionLoss, isSerializationFailure } from '../failures';

export { isConnectionLoss, isTransient, pgCode } from '../failures';

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
      const retry = i < attempts && (isSerializationFailure(err) || (!committing && isConnectionLoss(err)));
      if (!retry) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 20));
    } finally {
      await qr.release().catch(() => undefined);
    }
  }
}

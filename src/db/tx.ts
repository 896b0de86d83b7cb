import type { DataSource, EntityManager } from 'typeorm';
import { isConnectionLoss, isSerializationFailure, pgCode } from '../failures';
import { deferBegin, deferredState } from './prepared';
import { stickToPrimary } from '../readScope';

export { isConnectionLoss, isTransient, pgCode } from '../failures';

/** The server answered with an error (so a COMMIT behind it rolled back), as opposed to a lost connection. */
function pgAnswered(err: unknown): boolean {
  return !isConnectionLoss(err) && pgCode(err) !== undefined;
}

/**
 * Run fn in one transaction, retried on serialization failures and deadlocks, and on a lost
 * connection before COMMIT was sent (the server rolled the work back). A connection lost during
 * COMMIT is not retried here: the outcome is unknown, so the error goes up (the API answers 503
 * service_unavailable; idempotent callers retry with their key).
 *
 * `pipelined` (the lane's batch, isolation READ COMMITTED): BEGIN is not sent on its own but with
 * fn's first statements (queryPipelined or queryPrepared), and fn may send COMMIT with its last
 * (queryPipelined's `commit`), so the batch pays two round trips for four statements. A COMMIT
 * sent behind a failed statement rolls back, so a deadlock there is retried as before; a lost
 * connection once it is sent is not (its outcome is unknown).
 */
export async function inTransaction<T>(
  ds: DataSource,
  fn: (m: EntityManager) => Promise<T>,
  opts: { attempts?: number; isolation?: 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE'; pipelined?: boolean } = {},
): Promise<T> {
  const attempts = opts.attempts ?? 5;
  // A deferred BEGIN carries no isolation level: ask for both and one would be dropped silently.
  if (opts.pipelined && opts.isolation) throw new Error('inTransaction: a pipelined transaction runs at READ COMMITTED; drop `isolation` or `pipelined`');
  // On the primary, and so is the rest of a read scope that runs one: it must see what it wrote.
  stickToPrimary();
  for (let i = 1; ; i++) {
    const qr = ds.createQueryRunner();
    let committing = false;
    try {
      await qr.connect();
      if (opts.pipelined) deferBegin(qr);
      else await qr.startTransaction(opts.isolation);
      const out = await fn(qr.manager);
      committing = true;
      if (!opts.pipelined) await qr.commitTransaction();
      else if (deferredState(qr) === 'open') await qr.query('COMMIT');
      return out;
    } catch (err) {
      // A deferred COMMIT went out with fn's last statements: unknown unless the server answered.
      if (opts.pipelined && deferredState(qr) === 'committed' && !pgAnswered(err)) committing = true;
      if (qr.isTransactionActive && !committing) await qr.rollbackTransaction().catch(() => undefined);
      else if (opts.pipelined && !committing && deferredState(qr) !== 'none') await qr.query('ROLLBACK').catch(() => undefined);
      const retry = i < attempts && (isSerializationFailure(err) || (!committing && isConnectionLoss(err)));
      if (!retry) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 20));
    } finally {
      await qr.release().catch(() => undefined);
    }
  }
}

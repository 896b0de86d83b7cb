import type { DataSource, EntityManager } from 'typeorm';
import { inTransaction } from './tx';

/** Carries a dry run's answer out of the transaction it rolls back. */
class DryRunRollback<T> extends Error {
  constructor(readonly value: T) {
    super('dry run: rolled back');
  }
}

/**
 * Run a use case for real inside a transaction, then roll it all back and return its answer: a dry
 * run that validates, prices and refuses exactly as the real act would, and writes nothing.
 */
export async function rolledBack<T>(ds: DataSource, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  try {
    await inTransaction(ds, async (m) => {
      throw new DryRunRollback(await fn(m));
    });
  } catch (err) {
    if (err instanceof DryRunRollback) return err.value as T;
    throw err;
  }
  throw new Error('a dry run committed');
}

import type { DataSource, EntityManager } from 'typeorm';

const RETRYABLE = new Set(['40001', '40P01']); // serialization failure, deadlock

/** Run fn in one transaction, retried on serialization failures and deadlocks. */
export async function inTransaction<T>(ds: DataSource, fn: (m: EntityManager) => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await ds.transaction(fn);
    } catch (err) {
      const code = (err as { code?: string; driverError?: { code?: string } }).code ?? (err as { driverError?: { code?: string } }).driverError?.code;
      if (i >= attempts || !code || !RETRYABLE.has(code)) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 20));
    }
  }
}

export function pgCode(err: unknown): string | undefined {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}

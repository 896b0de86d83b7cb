/**
 * The one way into a write of a workspace's metrics (decisions, Issue 26).
 *
 * Metric writes of one workspace run one at a time (pg_advisory_xact_lock(7101, …)), so a
 * recalculation never reads a stale total. A waiter on that lock holds a pooled connection and an
 * open transaction while it waits, so a burst of readings on one workspace used to pin the shared
 * pool and starve trades. Writers therefore first queue in process, per workspace, on a promise
 * chain that holds no connection; only the head of the queue opens a transaction. The advisory
 * lock stays for exclusion between processes: per process at most one backend holds or waits on it.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { inTransaction } from '../../db/tx';
import { rolledBack } from '../../db/dryRun';

/** Per workspace: the promise the next writer waits on; removed when the last writer leaves. */
const queues = new Map<string, Promise<void>>();

/**
 * Run `fn` in its own transaction holding the workspace's metric lock, after this process's earlier
 * writers of the workspace have finished. A dry run rolls back. Never nest (same workspace: deadlock).
 */
export async function writeWorkspaceMetrics<T>(ds: DataSource, workspaceId: string, fn: (m: EntityManager) => Promise<T>, opts: { dryRun?: boolean } = {}): Promise<T> {
  const before = queues.get(workspaceId) ?? Promise.resolve();
  let leave!: () => void;
  const done = new Promise<void>((r) => (leave = r));
  const tail = before.then(() => done);
  queues.set(workspaceId, tail);
  await before;
  try {
    const locked = async (m: EntityManager) => {
      await m.query(`SELECT pg_advisory_xact_lock(7101, hashtext($1))`, [workspaceId]);
      return fn(m);
    };
    return await (opts.dryRun ? rolledBack(ds, locked) : inTransaction(ds, locked));
  } finally {
    leave();
    if (queues.get(workspaceId) === tail) queues.delete(workspaceId);
  }
}

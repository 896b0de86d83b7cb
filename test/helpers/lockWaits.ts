import { Client } from 'pg';

/**
 * Backends of the monitor's database waiting on a lock that any of `pids` holds, with the statement
 * each waits in. pg_stat_activity's rows are a snapshot taken when the view is first read, while
 * pg_blocking_pids reads the lock table live: a backend that was idle in the snapshot (showing its
 * previous statement) and blocked by the time its row is filtered would be reported with the wrong
 * statement. So only rows that the snapshot itself shows waiting on a lock count. Read it from
 * outside the holder's transaction: inside it, pg_stat_activity stays the snapshot it first took.
 */
export async function lockWaiters(monitor: Client, pids: number[]): Promise<Array<{ pid: number; query: string }>> {
  const r = await monitor.query(
    `SELECT pid, query FROM pg_stat_activity
      WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock' AND pg_blocking_pids(pid) && $1::int[]`,
    [pids],
  );
  return r.rows;
}

/** A row lock held from outside, and who waits on it. */
export interface HeldLock {
  pid: number;
  /** Backends waiting on a lock any of `pids` holds. */
  waitingOn(pids: number[]): Promise<number[]>;
  /** The statements those backends wait in. */
  blockedQueries(pids: number[]): Promise<string[]>;
  release(): Promise<unknown>;
}

/**
 * Hold a row lock (`lockSql`, in a transaction of a connection of its own) while `run` starts the
 * contenders and, when it wants, releases it; watched from a second connection (see lockWaiters).
 */
export async function whileHolding(lockSql: string, params: unknown[], run: (h: HeldLock) => Promise<void>): Promise<void> {
  const holder = new Client({ connectionString: process.env.DATABASE_URL });
  const monitor = new Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  await monitor.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(lockSql, params);
    const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
    await run({
      pid,
      waitingOn: async (pids) => (await lockWaiters(monitor, pids)).map((r) => r.pid),
      blockedQueries: async (pids) => (await lockWaiters(monitor, pids)).map((r) => r.query),
      release: () => holder.query('ROLLBACK'),
    });
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await holder.end();
    await monitor.end();
  }
}

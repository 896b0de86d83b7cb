import type { Client } from 'pg';

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

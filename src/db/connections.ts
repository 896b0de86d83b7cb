import type { Config } from '../config';

/** The queues' pool on the Postgres queue backend, and its LISTEN client. */
export const QUEUE_POOL_MAX = 12;

export interface ConnectionBudget {
  /**
   * At most this many connections to the primary, by part. The account system (services/accounts)
   * has no part: it runs on `pool`, the app's primary pool (issue 58).
   */
  primary: { pool: number; listen: number; queue: number; replicaProbe: number };
  primaryTotal: number;
  /** At most this many to each replica (its pool and its lag probe). */
  perReplica: number;
}

/** What one process of this configuration opens at most: every pool full, every listener connected. */
export function connectionBudget(config: Config, poolSize = config.DATABASE_POOL_MAX): ConnectionBudget {
  const replicas = config.replicaUrls.length;
  const primary = {
    pool: poolSize,
    listen: 1,
    queue: config.queueBackend === 'postgres' ? QUEUE_POOL_MAX + 1 : 0,
    replicaProbe: replicas ? 1 : 0,
  };
  return {
    primary,
    primaryTotal: Object.values(primary).reduce((a, b) => a + b, 0),
    perReplica: replicas ? config.DATABASE_REPLICA_POOL_MAX + 1 : 0,
  };
}

export interface ServerRoom {
  max: number;
  reserved: number;
  open: number;
}

/** The one sentence a start says when its connections would not fit in the server's max_connections, else null. */
export function overBudget(server: string, room: ServerRoom, opening: number): string | null {
  const usable = room.max - room.reserved;
  if (room.open + opening <= usable) return null;
  return `This process may open ${opening} connections to ${server}, which already has ${room.open} open of max_connections ${room.max} (${room.reserved} reserved for superusers): lower DATABASE_POOL_MAX (or DATABASE_REPLICA_POOL_MAX), run fewer processes, or raise max_connections.`;
}

export const ROOM_SQL =
  "SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved, (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS open";

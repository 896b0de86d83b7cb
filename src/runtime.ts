import type { Cluster, Redis } from 'ioredis';
import { JobHub, connectRedis, type QueueBackend } from '../jobs/hub';
import type { Config } from './config';
import { logger } from './logger';
import { openDatabase } from './db/dataSource';
import { connectionBudget, overBudget, ROOM_SQL, type ServerRoom } from './db/connections';
import { attachReplicas, detachReplicas, replicaName } from './db/replicas';
import { systemClock, type Clock, type Deps } from './deps';
import { wireAreas } from './services/wireAreas';
import { closeCallerCache } from './services/access';
import { closeAccountSystem, dropUnreadableSigningKeys } from './services/accounts';
import { closeNotices } from './db/notices';
import { closeAll } from './closeAll';

/** Connect Postgres (creating and migrating it) and, on the Redis layout, Redis; the same for every role and for tests. */
export async function bootDeps(config: Config, opts: { migrate?: boolean; clock?: Clock; poolSize?: number } = {}): Promise<Deps> {
  wireAreas();
  const poolSize = opts.poolSize ?? config.DATABASE_POOL_MAX;
  const ds = await openDatabase(config.databaseUrl, { migrate: opts.migrate ?? true, poolSize });
  await sayConnections(config, poolSize, await ds.query(ROOM_SQL).then((r: ServerRoom[]) => r[0]));
  if (config.replicaUrls.length) {
    await attachReplicas(ds, config.databaseUrl, {
      urls: config.replicaUrls,
      maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
      pollMs: config.DATABASE_REPLICA_POLL_MS,
      poolMax: config.DATABASE_REPLICA_POOL_MAX,
    }).catch(async (err) => {
      await ds.destroy().catch(() => undefined);
      throw err;
    });
  }
  const backend: QueueBackend =
    config.queueBackend === 'redis' ? { kind: 'redis', url: config.redisUrl, clusterNodes: config.REDIS_CLUSTER_NODES } : { kind: 'postgres', url: config.databaseUrl };
  let redis: Redis | Cluster | undefined;
  if (backend.kind === 'redis') {
    redis = connectRedis(backend);
    redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));
  }
  const hub = new JobHub({ backend, prefix: config.QUEUE_PREFIX, lanes: config.TRADE_LANES });
  const deps = { config, ds, redis, hub, clock: opts.clock ?? systemClock };
  // A changed AUTH_SECRET rotates the signing key here, before any request needs it (a script with no secret leaves it).
  if (config.authSecret) await dropUnreadableSigningKeys(deps);
  return deps;
}

/**
 * The connections this process may open, in one line, and one sentence when they would not fit in
 * the primary's max_connections beside those already open (a warning: the operator decides).
 */
async function sayConnections(config: Config, poolSize: number, room: ServerRoom): Promise<void> {
  const budget = connectionBudget(config, poolSize);
  logger.info(
    { primary: budget.primary, primaryTotal: budget.primaryTotal, perReplica: budget.perReplica, replicas: config.replicaUrls.map(replicaName) },
    `this process opens at most ${budget.primaryTotal} connections to the primary${budget.perReplica ? ` and ${budget.perReplica} to each of ${config.replicaUrls.length} replica(s)` : ''}`,
  );
  const over = overBudget('the primary', room, budget.primaryTotal);
  if (over) logger.warn(over);
}

/** Close every part, in order, even when one fails (its connection already lost, say); then throw the first failure. */
export async function closeDeps(deps: Deps): Promise<void> {
  await closeAll([
    () => closeCallerCache(deps),
    () => closeAccountSystem(deps),
    () => closeNotices(deps),
    () => deps.hub.close(),
    () => deps.redis?.disconnect(),
    () => detachReplicas(deps.ds),
    () => (deps.ds.isInitialized ? deps.ds.destroy() : undefined),
  ]);
}

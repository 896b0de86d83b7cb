import type { Cluster, Redis } from 'ioredis';
import { JobHub, connectRedis, type QueueBackend } from '../jobs/hub';
import type { Config } from './config';
import { logger } from './logger';
import { openDatabase } from './db/dataSource';
import { systemClock, type Clock, type Deps } from './deps';
import { wireAreas } from './services/wireAreas';
import { closeCallerCache } from './services/access/callerCache';
import { closeAccountSystem } from './services/accounts';
import { closeNotices } from './db/notices';
import { closeAll } from './closeAll';

/** Connect Postgres (creating and migrating it) and, on the Redis layout, Redis; the same for every role and for tests. */
export async function bootDeps(config: Config, opts: { migrate?: boolean; clock?: Clock; poolSize?: number } = {}): Promise<Deps> {
  wireAreas();
  const ds = await openDatabase(config.databaseUrl, { migrate: opts.migrate ?? true, poolSize: opts.poolSize });
  const backend: QueueBackend =
    config.queueBackend === 'redis' ? { kind: 'redis', url: config.redisUrl, clusterNodes: config.REDIS_CLUSTER_NODES } : { kind: 'postgres', url: config.databaseUrl };
  let redis: Redis | Cluster | undefined;
  if (backend.kind === 'redis') {
    redis = connectRedis(backend);
    redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));
  }
  const hub = new JobHub({ backend, prefix: config.QUEUE_PREFIX, lanes: config.TRADE_LANES });
  const deps = { config, ds, redis, hub, clock: opts.clock ?? systemClock };
  return deps;
}

/** Close every part, in order, even when one fails (its connection already lost, say); then throw the first failure. */
export async function closeDeps(deps: Deps): Promise<void> {
  await closeAll([
    () => closeCallerCache(deps),
    () => closeAccountSystem(deps),
    () => closeNotices(deps),
    () => deps.hub.close(),
    () => deps.redis?.disconnect(),
    () => (deps.ds.isInitialized ? deps.ds.destroy() : undefined),
  ]);
}

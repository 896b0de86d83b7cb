import { Redis } from 'ioredis';
import { JobHub, redisConnection } from '../jobs/hub';
import type { Config } from './config';
import { logger } from './logger';
import { openDatabase } from './db/dataSource';
import { systemClock, type Clock, type Deps } from './deps';
import { wireAreas } from './services/wireAreas';
import { closeCallerCache } from './services/access/callerCache';
import { closeAccountSystem } from './services/accounts';

/** Connect Postgres (creating and migrating it) and, on the Redis layout, Redis; the same for every role and for tests. */
export async function bootDeps(config: Config, opts: { migrate?: boolean; clock?: Clock; poolSize?: number } = {}): Promise<Deps> {
  wireAreas();
  const ds = await openDatabase(config.databaseUrl, { migrate: opts.migrate ?? true, poolSize: opts.poolSize });
  let redis: Redis | undefined;
  if (config.queueBackend === 'redis') {
    redis = new Redis({ ...redisConnection(config.redisUrl), lazyConnect: false });
    redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));
  }
  const backend = config.queueBackend === 'redis' ? { kind: 'redis' as const, url: config.redisUrl } : { kind: 'postgres' as const, url: config.databaseUrl };
  const hub = new JobHub({ backend, prefix: config.QUEUE_PREFIX, lanes: config.TRADE_LANES });
  const deps = { config, ds, redis, hub, clock: opts.clock ?? systemClock };
  return deps;
}

export async function closeDeps(deps: Deps): Promise<void> {
  await closeCallerCache(deps);
  await closeAccountSystem(deps);
  await deps.hub.close();
  deps.redis?.disconnect();
  if (deps.ds.isInitialized) await deps.ds.destroy();
}

import { RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { queueSchema } from '../../../jobs/definitions';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { logger } from '../../logger';

/**
 * Rate limits on Redis (rate-limiter-flexible), shared by every API process:
 * - signup: POST /agents/register and POST /onboard share one bucket per client address,
 *   RATE_LIMIT_REGISTER_PER_HOUR per rolling hour window;
 * - waitlist: POST /waitlist, the same number per client address, in a bucket of its own;
 * - request: every request, per API key (anonymous callers per client address),
 *   RATE_LIMIT_KEY_PER_MINUTE per minute window;
 * - proposal: POST /proposals per participant, RATE_LIMIT_PROPOSALS_PER_HOUR per rolling hour
 *   (issue 26: what an ordinary participant creates for free is bounded).
 * Keys live under `<QUEUE_PREFIX>:rl:<bucket>:<key>`, so instances sharing a Redis do not collide.
 * On the Postgres layout the same counters live in table rate_limits of the queues' schema
 * (bullmq_<QUEUE_PREFIX>), which rate-limiter-flexible creates.
 */
export type Bucket = 'signup' | 'waitlist' | 'request' | 'proposal';

/** Per bucket, in one place: its allowance (from config), its window and how a refusal names it. */
const BUCKETS: Record<Bucket, { points: (c: Deps['config']) => number; duration: number; what: (points: number) => string }> = {
  request: { points: (c) => c.RATE_LIMIT_KEY_PER_MINUTE, duration: 60, what: (n) => `${n} requests a minute` },
  signup: { points: (c) => c.RATE_LIMIT_REGISTER_PER_HOUR, duration: 3600, what: (n) => `${n} sign-ups an hour` },
  waitlist: { points: (c) => c.RATE_LIMIT_REGISTER_PER_HOUR, duration: 3600, what: (n) => `${n} waitlist entries an hour` },
  proposal: { points: (c) => c.RATE_LIMIT_PROPOSALS_PER_HOUR, duration: 3600, what: (n) => `${n} proposals an hour per participant` },
};

function shapeOf(deps: Deps, bucket: Bucket): { points: number; duration: number } {
  return { points: BUCKETS[bucket].points(deps.config), duration: BUCKETS[bucket].duration };
}

/**
 * A key whose window is spent (the shared store said so) is refused from memory until the window
 * ends: a flood of refused requests costs the store nothing, and no process can refuse early, as
 * only the store's count starts the block (rate-limiter-flexible's in-memory block).
 */
const SPENT_IN_MEMORY = (points: number) => ({ inMemoryBlockOnConsumed: points });

const limiters = new WeakMap<Deps, Map<Bucket, Promise<RateLimiterAbstract>>>();

async function postgresLimiter(deps: Deps, keyPrefix: string, points: number, duration: number): Promise<RateLimiterAbstract> {
  const schemaName = queueSchema(deps.config.QUEUE_PREFIX);
  await deps.ds.query(`CREATE SCHEMA IF NOT EXISTS "${schemaName}"`).catch((err: { code?: string }) => {
    if (err.code !== '23505' && err.code !== '42P06') throw err; // created by another process at once
  });
  return new Promise((resolve, reject) => {
    const l: RateLimiterPostgres = new RateLimiterPostgres(
      { storeClient: deps.ds, storeType: 'typeorm', schemaName, tableName: 'rate_limits', keyPrefix, points, duration, clearExpiredByTimeout: false, ...SPENT_IN_MEMORY(points) },
      (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(l)),
    );
  });
}

function limiterFor(deps: Deps, bucket: Bucket): Promise<RateLimiterAbstract> {
  let byBucket = limiters.get(deps);
  if (!byBucket) limiters.set(deps, (byBucket = new Map()));
  let l = byBucket.get(bucket);
  if (!l) {
    const { points, duration } = shapeOf(deps, bucket);
    const keyPrefix = `${deps.config.QUEUE_PREFIX}:rl:${bucket}`;
    // rejectIfRedisNotReady: a Redis outage fails fast (and open, below) instead of queueing the request.
    l = deps.redis
      ? Promise.resolve(new RateLimiterRedis({ storeClient: deps.redis, keyPrefix, points, duration, rejectIfRedisNotReady: true, ...SPENT_IN_MEMORY(points) }))
      : postgresLimiter(deps, keyPrefix, points, duration);
    l.catch(() => byBucket.delete(bucket)); // a store that failed to set up is tried again next time
    byBucket.set(bucket, l);
  }
  return l;
}

export interface RateState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** Spend one point of `key` in `bucket`; 429 rate_limited (with retryAfter seconds) when none is left. */
export async function consumePoint(deps: Deps, bucket: Bucket, key: string): Promise<RateState | null> {
  const { points, duration } = shapeOf(deps, bucket);
  try {
    const r = await (await limiterFor(deps, bucket)).consume(key, 1);
    return { limit: points, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000) };
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      const retryAt = new Date(Date.now() + retryAfter * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
      throw new DomainError('rate_limited', `Too many requests: the limit is ${BUCKETS[bucket].what(points)}; the next one frees in ${retryAfter} seconds (at ${retryAt}).`, {
        retryAfter,
        limit: points,
        windowSeconds: duration,
        bucket,
      });
    }
    // The store is unreachable: fail open rather than refuse every request.
    logger.warn({ err, bucket }, 'rate limiter unavailable; request allowed');
    return null;
  }
}

import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { logger } from '../../logger';

/**
 * Rate limits on Redis (rate-limiter-flexible), shared by every API process:
 * - signup: POST /agents/register and POST /onboard share one bucket per client address,
 *   RATE_LIMIT_REGISTER_PER_HOUR per rolling hour window;
 * - waitlist: POST /waitlist, the same number per client address, in a bucket of its own;
 * - request: every request, per API key (anonymous callers per client address),
 *   RATE_LIMIT_KEY_PER_MINUTE per minute window.
 * Keys live under `<QUEUE_PREFIX>:rl:<bucket>:<key>`, so instances sharing a Redis do not collide.
 */
export type Bucket = 'signup' | 'waitlist' | 'request';

interface BucketShape {
  points: number;
  duration: number;
}

function shapeOf(deps: Deps, bucket: Bucket): BucketShape {
  return bucket === 'request'
    ? { points: deps.config.RATE_LIMIT_KEY_PER_MINUTE, duration: 60 }
    : { points: deps.config.RATE_LIMIT_REGISTER_PER_HOUR, duration: 3600 };
}

const limiters = new WeakMap<Deps, Map<Bucket, RateLimiterRedis>>();

function limiterFor(deps: Deps, bucket: Bucket): RateLimiterRedis {
  let byBucket = limiters.get(deps);
  if (!byBucket) limiters.set(deps, (byBucket = new Map()));
  let l = byBucket.get(bucket);
  if (!l) {
    const { points, duration } = shapeOf(deps, bucket);
    // rejectIfRedisNotReady: a Redis outage fails fast (and open, below) instead of queueing the request.
    l = new RateLimiterRedis({ storeClient: deps.redis, keyPrefix: `${deps.config.QUEUE_PREFIX}:rl:${bucket}`, points, duration, rejectIfRedisNotReady: true });
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
    const r = await limiterFor(deps, bucket).consume(key, 1);
    return { limit: points, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000) };
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      const what = bucket === 'request' ? `${points} requests a minute` : `${points} ${bucket === 'signup' ? 'sign-ups' : 'waitlist entries'} an hour`;
      throw new DomainError('rate_limited', `Too many requests: the limit is ${what}; retry in ${retryAfter} seconds.`, {
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

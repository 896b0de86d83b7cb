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
 * - participant: every request of a key or session, per participant over all its keys,
 *   RATE_LIMIT_PARTICIPANT_PER_MINUTE per minute window (minting keys does not multiply the limit);
 * - proposal: POST /proposals per participant, RATE_LIMIT_PROPOSALS_PER_HOUR per rolling hour
 *   (issue 26: what an ordinary participant creates for free is bounded).
 * Keys live under `<QUEUE_PREFIX>:rl:<bucket>:<key>`, so instances sharing a Redis do not collide.
 * On the Postgres layout the same counters live in table rate_limits of the queues' schema
 * (bullmq_<QUEUE_PREFIX>), which rate-limiter-flexible creates.
 */
export type Bucket = 'signup' | 'waitlist' | 'request' | 'participant' | 'proposal' | 'auth' | 'client_registration' | 'signin_email' | 'signin_address';

/** Per bucket, in one place: its allowance (from config), its window and how a refusal names it. */
const BUCKETS: Record<Bucket, { points: (c: Deps['config']) => number; duration: number; what: (points: number) => string }> = {
  request: { points: (c) => c.RATE_LIMIT_KEY_PER_MINUTE, duration: 60, what: (n) => `${n} requests a minute` },
  participant: { points: (c) => c.RATE_LIMIT_PARTICIPANT_PER_MINUTE, duration: 60, what: (n) => `${n} requests a minute per participant, over all its keys` },
  signup: { points: (c) => c.RATE_LIMIT_REGISTER_PER_HOUR, duration: 3600, what: (n) => `${n} sign-ups an hour` },
  waitlist: { points: (c) => c.RATE_LIMIT_REGISTER_PER_HOUR, duration: 3600, what: (n) => `${n} waitlist entries an hour` },
  proposal: { points: (c) => c.RATE_LIMIT_PROPOSALS_PER_HOUR, duration: 3600, what: (n) => `${n} proposals an hour per participant` },
  // Issue 55: the account system's routes per address, OAuth client registrations per address, and the
  // sign-in brake per email and per address (a 15-minute window).
  auth: { points: (c) => c.RATE_LIMIT_AUTH_PER_MINUTE, duration: 60, what: (n) => `${n} account requests a minute` },
  client_registration: { points: (c) => c.RATE_LIMIT_CLIENT_REGISTRATION_PER_HOUR, duration: 3600, what: (n) => `${n} client registrations an hour` },
  signin_email: { points: (c) => c.SIGNIN_ATTEMPTS_PER_EMAIL, duration: 900, what: (n) => `${n} sign-in attempts per email in 15 minutes` },
  signin_address: { points: (c) => c.SIGNIN_ATTEMPTS_PER_ADDRESS, duration: 900, what: (n) => `${n} sign-in attempts per address in 15 minutes` },
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
  try {
    await deps.ds.query(`CREATE SCHEMA IF NOT EXISTS "${schemaName}"`);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw err; // created by another process at once
  }
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

/**
 * Leases (issue 29: a request's one Redis round trip was the rate limit's). A process takes points of
 * the 'request' bucket from the shared store several at a time and spends them from memory until its
 * window ends. The store only ever grants points it has (a lease is one `consume` of n points, refused
 * like any other past the limit), so the processes together never admit more than the limit. A lease
 * is at most LEASE_MAX and at most 1/LEASE_SHARE of what the store last said was left, so near the
 * end of a window every request asks the store again, one point at a time, as before. What a lease
 * can cost is on the other side, and bounded: points a process leased but did not spend before the
 * window ended (at most LEASE_MAX per process and key), and, when other processes took more than
 * (LEASE_SHARE - 1)/LEASE_SHARE of what was left during one lease's round trip, that lease's points.
 */
export const LEASE_MAX = 32;
const LEASE_SHARE = 8;

interface Lease {
  /** Points leased and not yet spent. */
  points: number;
  /** What the store said was left after the last lease or point taken. */
  left: number;
  /** When the window of those points ends (Date.now() ms). */
  until: number;
  /** A lease being taken: requests of the same key wait for it rather than each asking the store. */
  taking?: Promise<unknown>;
}

const leasesOf = new WeakMap<Deps, { byKey: Map<string, Lease>; sweptAt: number }>();

/** This process's leases; past 10,000 keys, ended ones are dropped, at most once a second (not on every request). */
function leases(deps: Deps): Map<string, Lease> {
  let st = leasesOf.get(deps);
  if (!st) leasesOf.set(deps, (st = { byKey: new Map(), sweptAt: 0 }));
  const now = Date.now();
  if (st.byKey.size > 10_000 && now - st.sweptAt >= 1000) {
    st.sweptAt = now;
    for (const [k, l] of st.byKey) if (l.until <= now && !l.taking) st.byKey.delete(k);
  }
  return st.byKey;
}

/** Spend a leased point of `key` from memory, if this process holds one in the current window. */
function spendLeased(l: Lease | undefined, limit: number): RateState | null {
  const now = Date.now();
  if (!l || l.points <= 0 || l.until <= now) return null;
  l.points--;
  return { limit, remaining: l.left + l.points, resetSeconds: Math.ceil((l.until - now) / 1000) };
}

/** Spend one point of the 'request' bucket: from this process's lease, else from the store (leasing more when far from the limit). */
async function consumeLeased(deps: Deps, limiter: RateLimiterAbstract, key: string, limit: number): Promise<RateState> {
  const map = leases(deps);
  let l = map.get(key);
  if (l?.taking) {
    await l.taking.catch(() => undefined);
    l = map.get(key);
  }
  const local = spendLeased(l, limit);
  if (local) return local;
  const want = l && l.until > Date.now() ? Math.max(1, Math.min(LEASE_MAX, Math.floor(l.left / LEASE_SHARE))) : 1;
  const taking = limiter.consume(key, want);
  if (want > 1) {
    if (!l) map.set(key, (l = { points: 0, left: 0, until: 0 }));
    l.taking = taking;
  }
  try {
    const r = await taking;
    const next: Lease = { points: want - 1, left: r.remainingPoints, until: Date.now() + r.msBeforeNext };
    map.set(key, next);
    return { limit, remaining: next.left + next.points, resetSeconds: Math.ceil(r.msBeforeNext / 1000) };
  } finally {
    if (l?.taking === taking) l.taking = undefined;
  }
}

/** Spend one point of `key` in `bucket`; 429 rate_limited (with retryAfter seconds) when none is left. */
export async function consumePoint(deps: Deps, bucket: Bucket, key: string): Promise<RateState | null> {
  const { points, duration } = shapeOf(deps, bucket);
  try {
    const limiter = await limiterFor(deps, bucket);
    if (bucket === 'request' || bucket === 'participant') return await consumeLeased(deps, limiter, key, points);
    const r = await limiter.consume(key, 1);
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

import type { DataSource, EntityManager } from 'typeorm';
import { refreshInBackground } from '../kept';
import { rows } from '../../db/queryRows';

type Q = DataSource | EntityManager;

/**
 * The standings area's cache of computed boards and ranks, with its invalidation beside it.
 * Standings change only when a book resolves (participant_results gains rows) or a season is
 * created or moved (seasons.updated_at): a computed value is reused while neither happened (the
 * newest resolution instant and the newest season edit are one index read, so a resolution in
 * another process invalidates too) and for at most STANDINGS_TTL_MS, so a workspace made public or
 * private shows within that time. One cache per database (DataSource), not per process: two apps
 * in one process (tests, benches) never see each other's boards.
 */
export const STANDINGS_TTL_MS = 5000;
const MAX_ENTRIES = 1000;
/**
 * A board that took longer than this to compute is answered as it was, past its TTL or version,
 * while the next one computes in the background (issue 60: the public board of 100,000
 * participants over 4.5 million stats rows takes 14 s; no reader should wait for it). A cheap board
 * is computed again before it is answered, so it is never behind.
 */
export const STANDINGS_STALE_AFTER_MS = 250;

interface Entry {
  at: number;
  version: string;
  value: unknown;
  /** How long it took to compute. */
  took: number;
}
const caches = new WeakMap<DataSource, Map<string, Entry>>();

function cacheOf(q: Q): Map<string, Entry> {
  const ds = 'connection' in q ? q.connection : q;
  let c = caches.get(ds);
  if (!c) caches.set(ds, (c = new Map()));
  return c;
}

/** The version a cached value was computed under: it changes when a book resolves or a season is edited. */
async function standingsVersion(q: Q): Promise<string> {
  const [v] = await rows<{ r: string | null; s: string | null }>(q, `SELECT (SELECT max(resolved_at) FROM participant_results)::text AS r, (SELECT max(updated_at) FROM seasons)::text AS s`);
  return `${v.r}|${v.s}`;
}

export async function cachedStanding<T>(q: Q, key: string, compute: () => Promise<T>): Promise<T> {
  const cache = cacheOf(q);
  const version = await standingsVersion(q);
  const hit = cache.get(key);
  if (hit && hit.version === version && Date.now() - hit.at < STANDINGS_TTL_MS) return hit.value as T;
  const run = async (): Promise<T> => {
    const started = performance.now();
    const value = await compute();
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(key, { at: Date.now(), version, value, took: performance.now() - started });
    return value;
  };
  if (hit && hit.took > STANDINGS_STALE_AFTER_MS) {
    refreshInBackground(cache, key, run);
    return hit.value as T;
  }
  return run();
}

/** Forget every computed board and rank of this database (bench/profiles measures the uncached path with it). */
export function clearStandingsCache(q: Q): void {
  cacheOf(q).clear();
}

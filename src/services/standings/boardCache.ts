import type { DataSource, EntityManager } from 'typeorm';

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

interface Entry {
  at: number;
  version: string;
  value: unknown;
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
  const [v] = await q.query(`SELECT (SELECT max(resolved_at) FROM participant_results)::text AS r, (SELECT max(updated_at) FROM seasons)::text AS s`);
  return `${v.r}|${v.s}`;
}

export async function cachedStanding<T>(q: Q, key: string, compute: () => Promise<T>): Promise<T> {
  const cache = cacheOf(q);
  const version = await standingsVersion(q);
  const hit = cache.get(key);
  if (hit && hit.version === version && Date.now() - hit.at < STANDINGS_TTL_MS) return hit.value as T;
  const value = await compute();
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(key, { at: Date.now(), version, value });
  return value;
}

/** Forget every computed board and rank of this database (bench/profiles measures the uncached path with it). */
export function clearStandingsCache(q: Q): void {
  cacheOf(q).clear();
}

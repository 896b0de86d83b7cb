import type { Deps } from '../deps';
import { logger } from '../logger';
import { outsideReadScope } from '../readScope';

/**
 * Platform-wide figures kept per process (issue 60): a sum or a ranking over every public workspace
 * grows with the platform, too much for every request. `keptFor` computes one at most once per
 * PLATFORM_TOTALS_TTL_MS (one computation in flight at a time; a failure is not kept) and says when
 * it was computed, which the answer carries (`asOf`). Past the TTL the kept value is still answered
 * while the next one computes in the background (at 10,000 workspaces the ranking takes 1.3 s: no
 * request should wait for it but the first). Each area keeps its own figures under its own names;
 * the TTL is their only invalidation, by design: such figures may be a moment old.
 */
export interface Kept<T> {
  value: T;
  asOf: Date;
}

interface Held<T> extends Kept<T> {
  at: number;
}

const kept = new WeakMap<Deps, Map<string, Held<unknown> | Promise<Held<unknown>>>>();
const refreshing = new WeakMap<object, Set<string>>();

/**
 * Runs `refresh` for `key` of `cache` in the background unless one already runs: on the primary,
 * outside the request's read scope (it may outlive the request that started it); a failure is logged
 * and the kept value stays. The one stale-while-refresh step of every kept figure (here and the
 * standings boards).
 */
export function refreshInBackground(cache: object, key: string, refresh: () => Promise<unknown>): void {
  let busy = refreshing.get(cache);
  if (!busy) refreshing.set(cache, (busy = new Set()));
  if (busy.has(key)) return;
  const running = busy;
  running.add(key);
  outsideReadScope(refresh)
    .catch((err: unknown) => logger.warn({ err, key }, 'a kept figure could not be refreshed; the previous one stays'))
    .finally(() => running.delete(key));
}

export async function keptFor<T>(deps: Deps, name: string, compute: () => Promise<T>): Promise<Kept<T>> {
  const ttl = deps.config.PLATFORM_TOTALS_TTL_MS;
  let byName = kept.get(deps);
  if (!byName) kept.set(deps, (byName = new Map()));
  const names = byName;
  const held = names.get(name);
  if (held instanceof Promise) return held as Promise<Held<T>>;
  if (held && performance.now() - held.at < ttl) return held as Held<T>;
  const run = (): Promise<Held<T>> => {
    const asOf = deps.clock.now();
    // On the primary: the computation is shared by every request waiting for it, whatever their scopes.
    return outsideReadScope(compute).then((value) => ({ value, asOf, at: performance.now() }));
  };
  if (held && ttl > 0) {
    // Stale: answered as it is; one refresh at a time replaces it.
    refreshInBackground(names, name, () => run().then((h) => names.set(name, h)));
    return held as Held<T>;
  }
  const pending = run().then(
    (h) => {
      if (ttl > 0) names.set(name, h);
      else names.delete(name);
      return h;
    },
    (err: unknown) => {
      names.delete(name);
      throw err;
    },
  );
  names.set(name, pending);
  return pending;
}

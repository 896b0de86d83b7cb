import type { Deps } from '../deps';

/**
 * Platform-wide figures kept per process (issue 60): a sum or a ranking over every public workspace
 * grows with the platform, too much for every request. `keptFor` computes one at most once per
 * PLATFORM_TOTALS_TTL_MS (one computation in flight at a time; a failure is not kept) and says when
 * it was computed, which the answer carries (`asOf`). Each area keeps its own figures under its own
 * names; the TTL is their only invalidation, by design: such figures may be a moment old.
 */
export interface Kept<T> {
  value: T;
  asOf: Date;
}

interface Held<T> extends Kept<T> {
  at: number;
}

const kept = new WeakMap<Deps, Map<string, Held<unknown> | Promise<Held<unknown>>>>();

export async function keptFor<T>(deps: Deps, name: string, compute: () => Promise<T>): Promise<Kept<T>> {
  const ttl = deps.config.PLATFORM_TOTALS_TTL_MS;
  let byName = kept.get(deps);
  if (!byName) kept.set(deps, (byName = new Map()));
  const names = byName;
  const held = names.get(name);
  if (held instanceof Promise) return held as Promise<Held<T>>;
  if (held && performance.now() - held.at < ttl) return held as Held<T>;
  const asOf = deps.clock.now();
  const pending = compute().then(
    (value) => {
      const h: Held<T> = { value, asOf, at: performance.now() };
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

import type { Deps } from '../../deps';
import { pgNotices, type PgNotices } from '../../db/notices';

/** Raised (by triggers, migration 1763801700000) when a key, workspace, group or membership changes. */
export const AUTH_CHANNEL = 'auth_changed';
const MAX_ENTRIES = 20_000;

/**
 * Per process: what resolving a caller reads (the key, the workspace, the group grants), kept in
 * memory so a trade skips three queries. Correctness rests on invalidation, not on the TTL: every
 * committed change to the tables behind it notifies AUTH_CHANNEL (a trigger, so no write path can
 * forget), and the listener drops everything. While the process's LISTEN connection is down nothing is
 * served from memory. A load that was running when a change arrived is not kept (generation check).
 * The TTL (AUTH_CACHE_TTL_MS, 0 = off) only bounds memory of idle entries.
 */
export class CallerCache {
  private readonly entries = new Map<string, { gen: number; at: number; value: unknown }>();
  private gen = 0;
  private live = false;
  private unsubscribe: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly notices: PgNotices,
    private readonly ttlMs: number,
  ) {}

  /** The cached value of `key`, else `load()` (kept unless null or a change arrived meanwhile). */
  async get<T>(key: string, load: () => Promise<T>, copy: (v: T) => T = (v) => v): Promise<T> {
    if (this.ttlMs <= 0) return load();
    if (!this.unsubscribe && !this.closed) this.open();
    const hit = this.entries.get(key);
    if (hit && this.live && hit.gen === this.gen && Date.now() - hit.at < this.ttlMs) return copy(hit.value as T);
    const gen = this.gen;
    const value = await load();
    if (value !== null && value !== undefined && this.live && gen === this.gen) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { gen, at: Date.now(), value });
      return copy(value);
    }
    return value;
  }

  private waiters: Array<{ table?: string; pid?: number; done: () => void }> = [];

  /** Forget everything (a change committed, here or elsewhere). */
  invalidate = (): void => {
    this.gen++;
    this.entries.clear();
  };

  private heard = 0;

  private notified = (msg: { payload?: string; processId?: number }): void => {
    this.heard++;
    this.invalidate();
    const due = this.waiters.filter((w) => (!w.table || w.table === msg.payload) && (!w.pid || w.pid === msg.processId));
    this.waiters = this.waiters.filter((w) => !due.includes(w));
    for (const w of due) w.done();
  };

  /**
   * Resolves on the next change notification (of `table`, from the backend `pid`, when named):
   * tests, a change made elsewhere has reached this process.
   */
  nextNotification(from: { table?: string; pid?: number } = {}): Promise<void> {
    return new Promise((done) => this.waiters.push({ ...from, done }));
  }

  /** Change notifications heard so far. */
  get notifications(): number {
    return this.heard;
  }

  /** Entries held now (tests: a lookup was served from memory). */
  get size(): number {
    return this.entries.size;
  }

  private open(): void {
    this.unsubscribe = this.notices.subscribe(AUTH_CHANNEL, {
      notice: (payload, pid) => this.notified({ payload, processId: pid }),
      // Up: anything loaded before the LISTEN took effect is not trusted. Lost: nothing is served
      // from memory until it is back (the shared LISTEN connection reopens itself after a pause).
      live: (up) => {
        this.invalidate();
        this.live = up;
      },
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    this.invalidate();
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Whether lookups are served from memory now (tests wait for it). */
  get serving(): boolean {
    return this.live;
  }
}

const caches = new WeakMap<Deps, CallerCache>();

export function callerCache(deps: Deps): CallerCache {
  let c = caches.get(deps);
  if (!c) caches.set(deps, (c = new CallerCache(pgNotices(deps), deps.config.AUTH_CACHE_TTL_MS)));
  return c;
}

export async function closeCallerCache(deps: Deps): Promise<void> {
  await caches.get(deps)?.close();
  caches.delete(deps);
}

import { Client } from 'pg';
import type { Deps } from '../../deps';
import { logger } from '../../logger';

/** Raised (by triggers, migration 1763801700000) when a key, workspace, group or membership changes. */
export const AUTH_CHANNEL = 'auth_changed';
const MAX_ENTRIES = 20_000;
const RECONNECT_MS = 1000;

/**
 * Per process: what resolving a caller reads (the key, the workspace, the group grants), kept in
 * memory so a trade skips three queries. Correctness rests on invalidation, not on the TTL: every
 * committed change to the tables behind it notifies AUTH_CHANNEL (a trigger, so no write path can
 * forget), and the listener drops everything. While that LISTEN connection is down nothing is
 * served from memory. A load that was running when a change arrived is not kept (generation check).
 * The TTL (AUTH_CACHE_TTL_MS, 0 = off) only bounds memory of idle entries.
 */
export class CallerCache {
  private readonly entries = new Map<string, { gen: number; at: number; value: unknown }>();
  private gen = 0;
  private live = false;
  private client: Client | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly databaseUrl: string,
    private readonly ttlMs: number,
  ) {}

  /** The cached value of `key`, else `load()` (kept unless null or a change arrived meanwhile). */
  async get<T>(key: string, load: () => Promise<T>, copy: (v: T) => T = (v) => v): Promise<T> {
    if (this.ttlMs <= 0) return load();
    if (!this.client && !this.closed) this.open();
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
    const client = new Client({ connectionString: this.databaseUrl });
    this.client = client;
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      if (err) logger.warn({ err }, 'caller cache LISTEN connection lost; reading callers from Postgres until it is back');
      this.live = false;
      this.invalidate();
      this.client = null;
      client.end().catch(() => undefined);
      if (!this.closed) {
        // Reopened by the next lookup after a pause (not in a tight loop while Postgres is away).
        this.closed = true;
        this.timer = setTimeout(() => {
          this.timer = null;
          this.closed = false;
        }, RECONNECT_MS);
        this.timer.unref();
      }
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', this.notified);
    client
      .connect()
      .then(() => client.query(`LISTEN ${AUTH_CHANNEL}`))
      .then(() => {
        if (this.client !== client) return;
        this.invalidate(); // anything loaded before the LISTEN took effect is not trusted
        this.live = true;
      })
      .catch(lost);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.live = false;
    this.invalidate();
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }

  /** Whether lookups are served from memory now (tests wait for it). */
  get serving(): boolean {
    return this.live;
  }
}

const caches = new WeakMap<Deps, CallerCache>();

export function callerCache(deps: Deps): CallerCache {
  let c = caches.get(deps);
  if (!c) caches.set(deps, (c = new CallerCache(deps.config.databaseUrl, deps.config.AUTH_CACHE_TTL_MS)));
  return c;
}

export async function closeCallerCache(deps: Deps): Promise<void> {
  await caches.get(deps)?.close();
  caches.delete(deps);
}

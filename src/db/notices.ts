import { Client } from 'pg';
import { logger } from '../logger';

const RECONNECT_MS = 1000;

/** What a subscriber hears on its channel. */
export interface NoticeSubscriber {
  /** A notice committed on the channel (its payload, and the notifying backend's pid). */
  notice(payload: string, pid: number): void;
  /** The LISTEN took effect (true), or the connection was lost (false: anything may have been missed). */
  live?(up: boolean): void;
}

/**
 * Per process: ONE Postgres LISTEN connection for every channel a part of the process subscribes to
 * (trade outcomes, auth changes, the event log). Postgres delivers a notice only to a connection that
 * was listening when the notifying transaction committed, so a subscriber learns through `live` when
 * it can rely on notices, and when it can no longer (lost: reconnected after a pause while anyone
 * still subscribes).
 */
export class PgNotices {
  private readonly subs = new Map<string, Set<NoticeSubscriber>>();
  private readonly listening = new Set<string>();
  private client: Client | null = null;
  private up = false;
  private paused = false;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly databaseUrl: string) {}

  subscribe(channel: string, sub: NoticeSubscriber): () => void {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let set = this.subs.get(channel);
    if (!set) this.subs.set(channel, (set = new Set()));
    set.add(sub);
    if (this.listening.has(channel)) sub.live?.(true);
    else if (this.up && this.client) this.listen(this.client, channel);
    else this.open();
    return () => {
      set.delete(sub);
      if (set.size) return;
      this.subs.delete(channel);
      if (!this.subs.size) void this.stop();
    };
  }

  /** Whether notices on `channel` are heard now. */
  isLive(channel: string): boolean {
    return this.listening.has(channel);
  }

  private open(): void {
    if (this.client || this.paused || this.closed) return;
    // Named by process, so an operator (or a test) can tell whose LISTEN connection a backend is.
    const client = new Client({ connectionString: this.databaseUrl, application_name: `mpps-notices-${process.pid}` });
    this.client = client;
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      if (err) logger.warn({ err }, 'LISTEN connection lost; notices are missed until it is back');
      this.drop();
      client.end().catch(() => undefined);
      if (!this.subs.size || this.closed) return;
      // Reopened after a pause, not in a tight loop while Postgres is away.
      this.paused = true;
      this.timer = setTimeout(() => {
        this.timer = null;
        this.paused = false;
        if (this.subs.size) this.open();
      }, RECONNECT_MS);
      this.timer.unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (m) => {
      for (const s of this.subs.get(m.channel) ?? []) s.notice(m.payload ?? '', m.processId);
    });
    client
      .connect()
      .then(() => {
        if (this.client !== client) return;
        this.up = true;
        for (const channel of this.subs.keys()) this.listen(client, channel);
      })
      .catch(lost);
  }

  private listen(client: Client, channel: string): void {
    client
      .query(`LISTEN ${channel}`)
      .then(() => {
        if (this.client !== client || this.listening.has(channel)) return;
        this.listening.add(channel);
        for (const s of this.subs.get(channel) ?? []) s.live?.(true);
      })
      .catch((err: unknown) => logger.warn({ err, channel }, 'LISTEN failed'));
  }

  /** Every channel stops being heard: each subscriber is told. */
  private drop(): void {
    const was = [...this.listening];
    this.listening.clear();
    this.up = false;
    this.client = null;
    for (const channel of was) for (const s of this.subs.get(channel) ?? []) s.live?.(false);
  }

  private stop(): Promise<void> {
    const c = this.client;
    this.drop();
    return c ? c.end().catch(() => undefined) : Promise.resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.stop();
  }
}

const perOwner = new WeakMap<object, PgNotices>();

/** The notices of a process's wiring (its deps): one LISTEN connection, closed with it (closeNotices). */
export function pgNotices(owner: { config: { databaseUrl: string } }): PgNotices {
  let n = perOwner.get(owner);
  if (!n) perOwner.set(owner, (n = new PgNotices(owner.config.databaseUrl)));
  return n;
}

export async function closeNotices(owner: object): Promise<void> {
  const n = perOwner.get(owner);
  perOwner.delete(owner);
  await n?.close();
}

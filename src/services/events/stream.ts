import { PassThrough, type Readable } from 'node:stream';
import type { Deps } from '../../deps';
import { pgNotices } from '../../db/notices';
import { logger } from '../../logger';
import { logHead, readFeedPage, type FeedEvent, type FeedScope } from './feed';
import { EVENTS_CHANNEL } from './sequencer';

/** Without a notification (a dropped LISTEN connection), streams still look this often. */
const FALLBACK_POLL_MS = 1000;

/**
 * Per process: the process's LISTEN connection wakes every open stream when the sequencer extends
 * the log (Postgres, not Redis: nothing is lost when Redis restarts); a slow timer is the fallback.
 */
class LogWaker {
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  constructor(private readonly deps: Deps) {}

  subscribe(wake: () => void): () => void {
    this.listeners.add(wake);
    if (this.listeners.size === 1) this.open();
    return () => {
      this.listeners.delete(wake);
      if (!this.listeners.size) this.close();
    };
  }

  private wakeAll = () => {
    for (const l of this.listeners) l();
  };

  private open(): void {
    this.timer = setInterval(this.wakeAll, FALLBACK_POLL_MS);
    this.timer.unref();
    this.unsubscribe = pgNotices(this.deps).subscribe(EVENTS_CHANNEL, { notice: this.wakeAll });
  }

  private close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

const wakers = new WeakMap<Deps, LogWaker>();
function wakerOf(deps: Deps): LogWaker {
  let w = wakers.get(deps);
  if (!w) wakers.set(deps, (w = new LogWaker(deps)));
  return w;
}

export function sseFrame(e: FeedEvent): string {
  return `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify({ ...e, timestamp: e.timestamp.toISOString() })}\n\n`;
}

/**
 * A Server-Sent Events body: every event after `after` (a Last-Event-ID), then each new one as the
 * log grows, with a heartbeat comment; a reconnecting client sends its last id and misses nothing.
 * No `after`: from the head (new events only).
 */
export async function openEventStream(deps: Deps, scope: FeedScope, opts: { after: string | null; types?: string[] }): Promise<Readable> {
  let cursor = opts.after ?? (await logHead(deps));
  const out = new PassThrough();
  let closed = false;
  let running = false;
  let again = false;
  const pump = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        for (;;) {
          const { events: batch, through } = await readFeedPage(deps, scope, { after: cursor, types: opts.types, limit: 500 });
          if (closed) return;
          for (const e of batch) out.write(sseFrame(e));
          cursor = through;
          if (batch.length < 500) break;
        }
      } while (again && !closed);
    } catch (err) {
      logger.warn({ err }, 'event stream read failed; the next wake retries');
    } finally {
      running = false;
    }
  };
  const unsubscribe = wakerOf(deps).subscribe(() => void pump());
  const heartbeat = setInterval(() => out.write(': heartbeat\n\n'), deps.config.SSE_HEARTBEAT_MS);
  heartbeat.unref();
  const stop = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    unsubscribe();
  };
  out.on('close', stop);
  out.on('error', stop);
  out.write(`retry: 2000\n: stream from ${cursor}\n\n`);
  void pump();
  return out;
}

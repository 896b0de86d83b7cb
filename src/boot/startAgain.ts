import { isConnectionLoss, isQueueLoss } from '../failures';

/**
 * A start that loses a connection it had made (a terminated Postgres backend, a failover, Redis
 * dropping) undoes what it started and starts again, backing off, instead of exiting: a process
 * restarted while its database is being failed over comes up once the database is back. A
 * connection never made (nothing listens there, no such host) still fails the start at once: that
 * is most often a wrong setting, and the operator should hear of it now.
 */

export const START_ATTEMPTS = 6;

const NEVER_CONNECTED = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/;

/** True when starting again may succeed: a connection was lost during the start, not refused. */
export function mayStartAgain(err: unknown): boolean {
  if (NEVER_CONNECTED.test((err as Error)?.message ?? '')) return false;
  return isConnectionLoss(err) || isQueueLoss(err);
}

/** Wait before attempt `attempt + 1`: 0.5 s, 1 s, 2 s, 4 s, then 5 s. */
export function startBackoffMs(attempt: number): number {
  return Math.min(5000, 250 * 2 ** attempt);
}

export interface StartAgainOptions {
  attempts?: number;
  /** Called before each new attempt, with the error that ended the last one. */
  onRetry(err: unknown, attempt: number, waitMs: number): void;
  /** True when the process is being stopped: no new attempt then. */
  stopping(): boolean;
  sleep?: (ms: number) => Promise<void>;
}

/** Run `start`; when it fails on a lost connection, run `undo` and start again, up to `attempts` times in all. */
export async function startAgainOnLostConnection<T>(start: () => Promise<T>, undo: () => Promise<void>, opts: StartAgainOptions): Promise<T> {
  const attempts = opts.attempts ?? START_ATTEMPTS;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= attempts || !mayStartAgain(err) || opts.stopping()) throw err;
      const waitMs = startBackoffMs(attempt);
      opts.onRetry(err, attempt, waitMs);
      await undo();
      await sleep(waitMs);
    }
  }
}

import { isConnectionLoss, isQueueLoss } from '../failures';

/**
 * A start that loses a connection it had made (a terminated Postgres backend, a failover, Redis
 * dropping a command) undoes what it started and starts again, backing off, instead of exiting: a
 * process restarted while its database is being failed over comes up once the database is back. A
 * first attempt whose connection is refused or whose host is unknown still fails at once: that is
 * most often a wrong setting, and the operator should hear of it now. Once a start has lost a
 * connection, a refusal is the database coming back and an unknown host is a failover moving its
 * name (or the resolver losing it for a moment), and the start keeps trying.
 */

export const START_ATTEMPTS = 6;

const NEVER_CONNECTED = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/;

/** True when starting again may succeed: a lost connection, or (after one was lost) a refused one or an unknown host. */
export function mayStartAgain(err: unknown, attempt = 1): boolean {
  if (NEVER_CONNECTED.test((err as Error)?.message ?? '')) return attempt > 1;
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

/**
 * Run `start`; when it fails on a lost connection, run `undo` and start again, up to `attempts`
 * times in all. A failing `undo` does not hide the start's error; the process being stopped (checked
 * before and after each wait) ends the attempts with the last error.
 */
export async function startAgainOnLostConnection<T>(start: () => Promise<T>, undo: () => Promise<void>, opts: StartAgainOptions): Promise<T> {
  const attempts = opts.attempts ?? START_ATTEMPTS;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= attempts || !mayStartAgain(err, attempt) || opts.stopping()) throw err;
      const waitMs = startBackoffMs(attempt);
      opts.onRetry(err, attempt, waitMs);
      await undo().catch(() => undefined);
      await sleep(waitMs);
      if (opts.stopping()) throw err;
    }
  }
}

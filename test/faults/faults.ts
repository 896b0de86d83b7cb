import { sleep, type Cluster } from './cluster';

/**
 * The fault schedule: SIGKILL a worker (then restart it), SIGKILL the API (then restart it and wait
 * until it answers), restart Redis empty on the same port, terminate the test database's Postgres
 * connections. Worker kills come first: a job a killed worker held is recovered only once BullMQ
 * finds it stalled (its 30 s lock expired, checked every 30 s), up to a minute later.
 */

export type FaultKind = 'kill-worker' | 'kill-api' | 'restart-redis' | 'terminate-pg';

export interface FaultEvent {
  kind: FaultKind;
  target?: string;
  startedAt: number;
  doneAt: number;
  detail?: string;
  error?: string;
}

/** Fractions of the fault window (0..1) at which each fault starts. */
export const DEFAULT_SCHEDULE: Array<{ at: number; kind: FaultKind }> = [
  { at: 0.02, kind: 'terminate-pg' },
  { at: 0.08, kind: 'kill-worker' },
  { at: 0.16, kind: 'kill-api' },
  { at: 0.24, kind: 'restart-redis' },
  { at: 0.32, kind: 'terminate-pg' },
  { at: 0.38, kind: 'kill-worker' },
  { at: 0.46, kind: 'kill-api' },
  { at: 0.54, kind: 'terminate-pg' },
  { at: 0.6, kind: 'kill-worker' },
  { at: 0.68, kind: 'restart-redis' },
  { at: 0.76, kind: 'kill-api' },
  { at: 0.84, kind: 'terminate-pg' },
  { at: 0.92, kind: 'restart-redis' },
  { at: 0.98, kind: 'terminate-pg' },
];

export class FaultRunner {
  readonly events: FaultEvent[] = [];
  private workerTurn = 0;

  constructor(private readonly cluster: Cluster) {}

  count(kind: FaultKind): number {
    return this.events.filter((e) => e.kind === kind && !e.error).length;
  }

  get lastFaultAt(): number {
    return Math.max(0, ...this.events.map((e) => e.doneAt));
  }

  /**
   * Runs the schedule over `windowSeconds`, one fault at a time (a slow one delays the next). After
   * a Redis restart the next fault waits at least `redisQuietMs`, so the lanes' recovery measured
   * after it (summary.ts) is Redis's alone, not the next fault's.
   */
  async run(windowSeconds: number, schedule = DEFAULT_SCHEDULE, redisQuietMs = 0): Promise<void> {
    const start = Date.now();
    let notBefore = 0;
    for (const f of schedule) {
      await sleep(Math.max(0, start + f.at * windowSeconds * 1000 - Date.now(), notBefore - Date.now()));
      await this.inject(f.kind);
      if (f.kind === 'restart-redis') notBefore = Date.now() + redisQuietMs;
    }
  }

  async inject(kind: FaultKind): Promise<void> {
    const ev: FaultEvent = { kind, startedAt: Date.now(), doneAt: 0 };
    try {
      if (kind === 'kill-worker') {
        ev.target = `worker${(this.workerTurn++ % 2) + 1}`;
        await this.cluster.killAndRestart(ev.target);
      } else if (kind === 'kill-api') {
        ev.target = 'api';
        await this.cluster.killAndRestart('api');
      } else if (kind === 'restart-redis') {
        await this.cluster.restartRedis();
      } else {
        ev.detail = `${await this.cluster.terminatePg()} backends`;
      }
    } catch (err) {
      ev.error = String((err as Error).message ?? err);
    }
    ev.doneAt = Date.now();
    this.events.push(ev);
  }
}

import type { Deps } from '../src/deps';
import { logger } from '../src/logger';
import { logAdvance, logHead, purgeEvents, sequenceEvents } from '../src/services/events';
import { kickHooks, purgeDeliveries, sweepHooks } from '../src/services/hooks';
import type { Processors } from './types';

/** One sequencer pass, then a delivery run for the endpoints of the workspaces that got events. */
async function relayOnce(deps: Deps): Promise<number> {
  const pass = await sequenceEvents(deps);
  if (pass.sequenced) await kickHooks(deps, pass.workspaceIds, pass.lastSeq ?? '0');
  return pass.sequenced;
}

/** outbox: the cron's relay is the backstop of the pump below (a process without workers running, a stalled loop). */
export const outboxProcessors = (deps: Deps): Processors<'outbox'> => ({
  relay: async () => {
    const sequenced = await relayOnce(deps);
    const swept = await sweepHooks(deps, String(Math.floor(Date.now() / 2000)));
    return { sequenced, swept };
  },
  purge: async () => ({ ...(await purgeEvents(deps, deps.config.EVENT_RETENTION_DAYS)), ...(await purgeDeliveries(deps, deps.config.EVENT_RETENTION_DAYS)) }),
});

const SWEEP_EVERY_MS = 5000;
/** Rows per sequencer pass; a full pass means a backlog, and the next pass runs at once. */
const SEQUENCE_BATCH = 2000;

/**
 * The worker's event loop: sequences committed events every EVENTS_POLL_MS (at once again while
 * a backlog remains) and kicks their endpoints; every few seconds it sweeps for endpoints with work
 * and no job (a job lost with Redis). All state is in Postgres, so a restart of either loses nothing.
 */
export class EventPump {
  private stopped = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  constructor(private readonly deps: Deps) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(r, ms);
      this.wake = () => {
        clearTimeout(t);
        r();
      };
    });
  }

  private async run(): Promise<void> {
    let lastSweep = 0;
    let failures = 0;
    // What this process has kicked up to: another process may have sequenced the events (the backlog at start is the sweep's).
    let seen: string | null = null;
    let found = false;
    while (!this.stopped) {
      let busy = false;
      try {
        // Again at once only for a backlog (a full batch): under a steady flow a pass every
        // EVENTS_POLL_MS takes what arrived meanwhile, instead of one pass per trade competing with them.
        const pass = await sequenceEvents(this.deps, SEQUENCE_BATCH, { probe: !found });
        found = pass.sequenced > 0;
        busy = pass.sequenced >= SEQUENCE_BATCH;
        seen ??= await logHead(this.deps);
        // This pass's numbers follow on from what this process has kicked: nothing to read back.
        // Otherwise another process's pass numbered some in between, and the log says which.
        const own: boolean = pass.lastSeq !== null && BigInt(pass.lastSeq) - BigInt(pass.sequenced) === BigInt(seen);
        const moved: { head: string; workspaceIds: string[] } = own ? { head: pass.lastSeq!, workspaceIds: pass.workspaceIds } : await logAdvance(this.deps, seen);
        if (moved.head !== seen) {
          await kickHooks(this.deps, moved.workspaceIds, moved.head);
          seen = moved.head;
        }
        if (Date.now() - lastSweep >= SWEEP_EVERY_MS) {
          lastSweep = Date.now();
          await sweepHooks(this.deps, String(Math.floor(lastSweep / SWEEP_EVERY_MS)));
        }
        failures = 0;
      } catch (err) {
        found = false;
        failures++;
        if (failures === 1 || failures % 50 === 0) logger.warn({ err, failures }, 'event pump pass failed; retrying');
      }
      if (this.stopped) break;
      await this.sleep(busy ? 0 : failures ? Math.min(1000, this.deps.config.EVENTS_POLL_MS * 2 ** Math.min(failures, 6)) : this.deps.config.EVENTS_POLL_MS);
    }
  }
}

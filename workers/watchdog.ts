import type { HubQueue } from '../jobs/hub';
import type { Deps } from '../src/deps';
import { logger } from '../src/logger';
import { recoverChainJobs } from '../src/services/credits';
import { recoverPendingTrades } from '../src/services/trading';

/**
 * What keeps the trade lanes' guarantees whatever Redis and the processes do, run at worker start
 * and every WATCHDOG_INTERVAL_MS:
 * - each lane's global concurrency (1) is re-asserted: a Redis restart without persistence erases it,
 *   and it is otherwise written only when a worker boots;
 * - every trade request still pending gets a live job again (its job lost with a killed process
 *   or a Redis restart), so no Idempotency-Key waits forever;
 * - every open deposit and withdrawal no job has looked at for a while gets its next check again.
 */
export class Watchdog {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private readonly again = () => void this.tick();
  constructor(private readonly deps: Deps) {}

  /** Lanes whose concurrency setting was found missing or wrong and set again (for the tests). */
  reasserted = 0;

  async start(): Promise<void> {
    await this.tick();
    // Re-assert at once when Redis comes back, not only at the next tick.
    this.deps.redis?.on('ready', this.again);
    this.timer = setInterval(this.again, this.deps.config.WATCHDOG_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.deps.redis?.off('ready', this.again);
    await this.running;
  }

  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<void> {
    try {
      await this.assertLaneConcurrency();
      const r = await recoverPendingTrades(this.deps, this.deps.config.TRADE_RECOVERY_AFTER_MS);
      if (r.requeued || r.failed) logger.warn({ ...r }, 'recovered pending trade requests');
      const c = await recoverChainJobs(this.deps);
      if (c.deposits || c.withdrawals) logger.warn({ ...c }, 're-enqueued chain jobs that no job was looking after');
    } catch (err) {
      // Redis or Postgres is down: the next tick tries again.
      logger.warn({ err }, 'watchdog pass failed');
    }
  }

  /** Every lane's current setting: on Redis one pipelined read, on Postgres or a Redis Cluster one read per lane. */
  private async laneConcurrency(lanes: HubQueue[]): Promise<Array<number | null>> {
    const redis = this.deps.redis;
    // A cluster pipeline must stay within one node's slots, and the lanes spread over the nodes: one read each.
    if (!redis || redis.isCluster) return Promise.all(lanes.map(async (q) => (await q.getGlobalConcurrency()) ?? null));
    const found = (await redis.pipeline(lanes.map((q) => ['hget', q.keys.meta, 'concurrency'])).exec()) ?? [];
    return lanes.map((_, i) => {
      const [err, raw] = found[i] ?? [new Error('no reply'), null];
      if (err) throw err;
      return raw === null || raw === undefined ? null : Number(raw);
    });
  }

  /** One read of every lane's setting; a write only where one is wrong. */
  private async assertLaneConcurrency(): Promise<void> {
    const serial = this.deps.config.TRADE_LANES_SERIAL;
    const lanes = this.deps.hub.queueNames('trade').map((name) => this.deps.hub.queue(name));
    const found = await this.laneConcurrency(lanes);
    for (const [i, q] of lanes.entries()) {
      const current = found[i];
      if (serial && current !== 1) {
        await q.setGlobalConcurrency(1);
        this.reasserted++;
        logger.warn({ queue: q.name, found: current }, 'lane concurrency was not 1; set again');
      } else if (!serial && current !== null) {
        await q.removeGlobalConcurrency();
      }
    }
  }
}

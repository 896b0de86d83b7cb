import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runChecks, type CheckResult } from './checks';
import { HarnessClient, type Deadline } from './client';
import { Cluster } from './cluster';
import { FaultRunner } from './faults';
import { Load, type ScheduledAction } from './load';
import { buildFloor } from './setup';
import { formatSummary, summarize } from './summary';

/**
 * Fault harness for the money path. Each mode starts its own cluster (a private Redis, a fresh
 * database, one API and two workers as child processes, all three started at once on the
 * unmigrated database), builds a floor over HTTP, runs 20 traders against it while killing
 * workers and the API, restarting Redis empty and terminating Postgres connections, then checks
 * from the database that every acknowledged trade applied exactly once, nothing is left pending,
 * the ledger balances, and books and positions equal a replay of the trades.
 *
 * Knobs: FAULT_LOAD_SECONDS (default 50: the load, longer if the faults overrun; the faults take its first 80%),
 * FAULT_REDIS_QUIET_MS (default 5000: no other fault that soon after Redis answers again, so the
 * printed per-lane recovery is Redis's own),
 * FAULT_STUCK_MS (default 60000: how long after the last fault a request may still wait for a
 * definite answer), FAULT_TRADE_WAIT_MS (default 3000: the services' TRADE_WAIT_MS), FAULT_MODES (default "A,B"), KEEP_FAULT_LOGS=1 keeps the processes' logs, KEEP_FAULT_DB=1 the database.
 */

const LOAD_SECONDS = Number(process.env.FAULT_LOAD_SECONDS ?? 50);
const FAULT_WINDOW_SECONDS = LOAD_SECONDS * 0.8;
const STUCK_MS = Number(process.env.FAULT_STUCK_MS ?? 60_000);
const REDIS_QUIET_MS = Number(process.env.FAULT_REDIS_QUIET_MS ?? 5000);
const MODES = (process.env.FAULT_MODES ?? 'A,B').split(',').map((m) => m.trim().toUpperCase());
const TEST_TIMEOUT_MS = 180_000 + LOAD_SECONDS * 1000 + STUCK_MS;

function defineMode(mode: 'A' | 'B', title: string, workerEnv: Record<string, string>, env: Record<string, string> = {}): void {
  // The harness restarts a Redis of its own (redis-server): it has nothing to do on the Postgres-only layout.
  const block = MODES.includes(mode) && process.env.QUEUE_BACKEND !== 'postgres' ? describe : describe.skip;
  block(`money path under faults, mode ${mode}: ${title}`, () => {
    let cluster: Cluster | undefined;
    let client: HarnessClient | undefined;

    afterAll(async () => {
      client?.close();
      await cluster?.close();
    }, 60_000);

    it(
      'acknowledged trades apply exactly once; no key stuck or pending; ledger, books and positions sound',
      async () => {
        cluster = new Cluster({ label: mode, workerEnv, env });
        const c = cluster;
        let reported = false;
        try {
          await c.start();
          const deadline: Deadline = { at: Date.now() + 90_000 };
          client = new HarnessClient(() => c.apiBase, deadline);
          const floor = await buildFloor(client, c.masterKey, { traders: 20, metricValues: [500, 300, 650, 420], proposals: 3, traderCredits: 1000 });

          deadline.at = Number.POSITIVE_INFINITY; // until the last fault has happened
          const faults = new FaultRunner(c);
          const load = new Load(client, floor, c.masterKey);
          const scheduled: ScheduledAction[] = [
            { at: LOAD_SECONDS * 0.25, label: 'approve proposal 1', run: load.decide(0, 'approve') },
            { at: LOAD_SECONDS * 0.5, label: 'decline proposal 2', run: load.decide(1, 'decline') },
            { at: LOAD_SECONDS * 0.72, label: 'settle metric 3', run: load.settle(2, 720) },
            { at: LOAD_SECONDS * 0.86, label: 'settle metric 4', run: load.settle(3, 150) },
          ];
          const loadStartedAt = Date.now();
          const faultsDone = faults.run(FAULT_WINDOW_SECONDS, undefined, REDIS_QUIET_MS).then(() => {
            deadline.at = faults.lastFaultAt + STUCK_MS;
          });
          await Promise.all([load.run(LOAD_SECONDS, scheduled, faultsDone), faultsDone]);
          await load.drain();

          const db = await c.db();
          let checks: CheckResult;
          try {
            checks = await runChecks(db, client.records);
          } finally {
            await db.end();
          }
          for (const crash of c.crashes) {
            checks.violations.add('service_crash', `${crash.name} exited on its own (code ${crash.code}, signal ${crash.signal}) ${crash.at - loadStartedAt} ms into the load; its log ended with:\n${crash.logTail}`);
          }
          // A fault that could not be carried out (the API not answering again within a minute of its restart, say).
          for (const e of faults.events) if (e.error) checks.violations.add('fault_injection_failed', `${e.kind} ${e.target ?? ''}: ${e.error}`);
          for (const e of load.errors) checks.violations.add('harness_error', e);

          // Every request's attempts, first-send and definite-answer times and outcome, for post-mortems (KEEP_FAULT_LOGS=1).
          writeFileSync(join(c.dir, 'requests.json'), JSON.stringify({ faults: faults.events, requests: client.records }, null, 1));
          const summary = summarize(mode, client.records, faults, c.crashes, checks, c.lanes);
          const text = formatSummary(summary, checks.violations.examples);
          reported = checks.violations.total > 0;
          console.log(reported ? `${text}\n\nservice logs (tails):\n${c.logTails(2500)}` : text);
          expect(summary.acknowledged).toBeGreaterThan(100);
          checks.violations.expectNone();
        } catch (err) {
          if (!reported) console.log(`fault harness mode ${mode} failed: ${String((err as Error).message ?? err)}\nservice logs (tails):\n${c.logTails()}`);
          throw err;
        }
      },
      TEST_TIMEOUT_MS,
    );
  });
}

defineMode('A', 'lanes serialized, a batch applied at once where its lane is idle (the defaults)', {});
// Issue 66: with batches applied at once in the API, mode A's lane jobs are few; mode B sends every batch through the lanes, so the queue's path still meets every fault.
defineMode('B', 'every batch through lanes not serialized (TRADE_APPLY_AT_ONCE=false, TRADE_LANES_SERIAL=false): the trade transaction alone must keep things correct', { TRADE_LANES_SERIAL: 'false' }, { TRADE_APPLY_AT_ONCE: 'false' });

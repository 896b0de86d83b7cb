import { checkOrder, readOrderInputs, runChecks, Violations, type TradeRow } from './checks';
import { HarnessClient, type Deadline } from './client';
import { Cluster } from './cluster';
import { Load } from './load';
import { buildFloor } from './setup';

/**
 * Scale-out on one engine: two API processes and two worker processes against one Postgres and
 * one Redis, then the same on a 3-node Redis Cluster (redis-server --cluster-enabled). Traders send
 * every request to both APIs in turn (a retry may land on the other one), so each market's lane gets
 * jobs from both; afterwards every acknowledged trade must be applied exactly once, the ledger
 * sound, books and positions equal to a replay, and each market's trades chained in seq order
 * through the LMSR (checkOrder). On the cluster, the lanes' keys must sit on at least two masters,
 * each queue's keys on one. The cluster has a replica per master, and under the load the master
 * holding the horizon queue is SIGKILLed (issue 66): its replica takes over, the owner's
 * POST /predictions/markets/refresh, sent all along, answers 200 or 503 in its own words
 * (refresh_pending, service_unavailable; never trade_pending) with Retry-After, as every retryable
 * answer must (checks.ts), and the money checks hold. Other faults: test/faults/moneyPath.test.ts.
 *
 * Knobs: SCALE_LOAD_SECONDS (default 15 per layout), SCALE_TRADERS (16), SCALE_LAYOUTS ("single,cluster"), KEEP_FAULT_LOGS=1.
 */

const LOAD_SECONDS = Number(process.env.SCALE_LOAD_SECONDS ?? 15);
const LAYOUTS = (process.env.SCALE_LAYOUTS ?? 'single,cluster').split(',').map((s) => s.trim());
const TRADERS = Number(process.env.SCALE_TRADERS ?? 16);
const LANES = 8;

function defineLayout(layout: 'single' | 'cluster', title: string): void {
  // Redis of its own (redis-server): nothing to do on the Postgres-only layout.
  const block = LAYOUTS.includes(layout) && process.env.QUEUE_BACKEND !== 'postgres' ? describe : describe.skip;
  block(`scale-out: ${title}`, () => {
    let cluster: Cluster | undefined;
    let client: HarnessClient | undefined;

    afterAll(async () => {
      client?.close();
      await cluster?.close();
    }, 60_000);

    it(
      'both APIs serve the same markets; every acknowledged trade applies once, in order per market; the ledger sound',
      async () => {
        const onCluster = layout === 'cluster' ? { redisClusterNodes: 3, redisClusterReplicas: 1 } : {};
        cluster = new Cluster({ label: `scale-${layout}`, apis: 2, workers: 2, ...onCluster, env: { TRADE_LANES: String(LANES) } });
        const c = cluster;
        try {
          await c.start();
          const deadline: Deadline = { at: Date.now() + 90_000 };
          const bases = c.apiBases;
          let turn = 0;
          client = new HarnessClient(() => bases[turn++ % bases.length], deadline);
          const floor = await buildFloor(client, c.masterKey, { traders: TRADERS, metricValues: [500, 300, 650, 420], proposals: 2, traderCredits: 1000 });

          deadline.at = Date.now() + LOAD_SECONDS * 1000 + 60_000;
          const load = new Load(client, floor, c.masterKey);
          const asOwner = { 'X-Agent-Key': floor.ownerKey, 'X-Workspace-Id': floor.workspaceId };
          const refresh = () => client!.send('refresh', 'POST', '/api/predictions/markets/refresh', asOwner, { force: true });
          // On the cluster: the master that holds the horizon queue (one pass first, so it has keys) dies under the load.
          const victim = layout === 'cluster' ? (await refresh(), await horizonMaster(c)) : undefined;
          const startedAt = Date.now();
          let failover: { killedAt: number; promotedAt: number } | undefined;
          let loading = true;
          const refreshes = (async () => {
            while (loading) {
              await refresh();
              await new Promise((r) => setTimeout(r, 300));
            }
          })();
          const killing = victim === undefined ? Promise.resolve() : killMaster(c, victim, LOAD_SECONDS * 400).then((f) => void (failover = f));
          await load.run(LOAD_SECONDS, [], killing);
          loading = false;
          await refreshes;
          await load.drain();
          const seconds = (Date.now() - startedAt) / 1000;

          const db = await c.db();
          let checks;
          let order: { books: Parameters<typeof checkOrder>[1]; trades: TradeRow[] };
          try {
            checks = await runChecks(db, client.records);
            order = await readOrderInputs(db);
          } finally {
            await db.end();
          }
          for (const crash of c.crashes) checks.violations.add('service_crash', `${crash.name} exited on its own (code ${crash.code}, signal ${crash.signal}):\n${crash.logTail}`);
          for (const e of load.errors) checks.violations.add('harness_error', e);

          const trades = client.records.filter((r) => r.kind === 'trade' || r.kind === 'condensed');
          const acked = trades.filter((r) => r.status === 200);
          // Markets whose acknowledged trades were answered by both APIs.
          const apisByMarket = new Map<string, Set<string>>();
          for (const r of acked) apisByMarket.set(r.marketId!, (apisByMarket.get(r.marketId!) ?? new Set()).add(r.answeredBy!));
          const fromBoth = [...apisByMarket.values()].filter((s) => s.size === bases.length).length;
          const perApi = bases.map((b) => acked.filter((r) => r.answeredBy === b).length);

          // The order check must be able to fail: the same trades with two of one market's swapped break it.
          const swapped = swapTwo(order.trades);
          const probe = new Violations();
          if (swapped) checkOrder(probe, order.books, swapped);

          let spread = '';
          let lanes: Array<[string, Set<number>]> = [];
          let nodesByQueue = new Map<string, Set<number>>();
          if (layout === 'cluster') {
            nodesByQueue = await queueNodes(c, await c.clusterMasters());
            lanes = [...nodesByQueue.entries()].filter(([q]) => q.startsWith('trade-'));
            spread = ` lanes over nodes: ${c.clusterPorts.map((p) => `${p}=${lanes.filter(([, ns]) => ns.has(p)).map(([q]) => q).join(' ')}`).join('; ')}`;
            // Each queue's keys on one node (its hash tag).
            for (const [q, ns] of nodesByQueue) if (q.includes('{') && ns.size !== 1) checks.violations.add('queue_split_over_nodes', `${q} on ${[...ns].join(', ')}`);
          }
          const refreshed = client.records.filter((r) => r.kind === 'refresh' && failover && r.firstSentAt <= failover.promotedAt && (r.definiteAt ?? Infinity) >= failover.killedAt);
          if (failover) {
            const seen: Record<string, number> = {};
            for (const r of refreshed) for (const [k, n] of Object.entries(r.indefinite)) seen[k] = (seen[k] ?? 0) + n;
            console.log(
              `failover: master ${victim} (horizon queue) killed ${((failover.killedAt - startedAt) / 1000).toFixed(1)} s into the load, its replica master ${((failover.promotedAt - failover.killedAt) / 1000).toFixed(1)} s later; ` +
                `${refreshed.length} refreshes spanned it (answers before the last: ${JSON.stringify(seen)}; slowest ${Math.max(0, ...refreshed.map((r) => (r.definiteAt ?? 0) - r.firstSentAt))} ms)`,
            );
          }
          console.log(
            `scale-out ${layout}: 2 APIs + 2 workers, ${LANES} lanes, ${TRADERS} traders, ${floor.markets.length} markets, ${trades.length} trade requests, ${acked.length} acknowledged ` +
              `(${(acked.length / seconds).toFixed(1)} trades/s over ${seconds.toFixed(1)} s; per API ${perApi.join(' / ')}), ` +
              `${fromBoth} of ${apisByMarket.size} markets traded through both APIs, ${checks.counts.orderChecked} trades order-checked, violations ${JSON.stringify(checks.violations.counts)}.${spread}`,
          );
          if (checks.violations.total > 0) console.log(`${JSON.stringify(checks.violations.examples, null, 1)}\n${c.logTails(2500)}`);
          expect(acked.length).toBeGreaterThan(100);
          expect(perApi.every((n) => n > 0)).toBe(true);
          expect(fromBoth).toBeGreaterThan(apisByMarket.size / 2);
          expect(checks.counts.orderChecked).toBeGreaterThan(100);
          expect(probe.counts.market_order_broken).toBeGreaterThan(0);
          checks.violations.expectNone();
          if (layout === 'cluster') {
            expect(failover).toBeDefined();
            expect(refreshed.length).toBeGreaterThan(0);
            expect(lanes.length).toBe(LANES);
            expect(new Set(lanes.flatMap(([, ns]) => [...ns])).size).toBeGreaterThanOrEqual(2);
            // The rate limiter and the key-use debounce ran on the cluster too.
            expect(nodesByQueue.has('rl')).toBe(true);
          }
        } catch (err) {
          console.log(`scale-out ${layout} failed: ${String((err as Error).message ?? err)}\nservice logs (tails):\n${c.logTails()}`);
          throw err;
        }
      },
      240_000 + LOAD_SECONDS * 1000,
    );
  });
}

/** A copy of the trades with the first two consecutive trades of one market at different prices swapped. */
function swapTwo(trades: TradeRow[]): TradeRow[] | undefined {
  const last = new Map<string, number>();
  for (const [i, t] of trades.entries()) {
    if (t.kind === 'redeem') continue;
    const j = last.get(t.market_id);
    if (j !== undefined && trades[j].probability_before !== t.probability_before) {
      const copy = [...trades];
      [copy[i], copy[j]] = [copy[j], copy[i]];
      return copy;
    }
    last.set(t.market_id, i);
  }
  return undefined;
}

/** Per queue (the key's second part, `<prefix>:<queue>:...`), the cluster nodes (of `ports`) holding its keys. */
async function queueNodes(c: Cluster, ports: number[]): Promise<Map<string, Set<number>>> {
  const out = new Map<string, Set<number>>();
  for (const port of ports) {
    const keys = (await c.redisCli(port, '--scan', '--pattern', `${c.queuePrefix}:*`)).split('\n').filter(Boolean);
    for (const k of keys) {
      const q = k.split(':')[1];
      out.set(q, (out.get(q) ?? new Set()).add(port));
    }
  }
  return out;
}

defineLayout('single', 'two APIs and two workers on one Redis');
defineLayout('cluster', 'two APIs and two workers on a 3-node Redis Cluster');

/** The master holding the horizon queue's keys. */
async function horizonMaster(c: Cluster): Promise<number> {
  for (const [q, ports] of await queueNodes(c, await c.clusterMasters())) if (q.includes('horizons')) return [...ports][0];
  throw new Error('no master holds the horizon queue');
}

/** After `afterMs`, SIGKILL master `port`; resolves once another node reports its slots' new master (the replica promoted). */
async function killMaster(c: Cluster, port: number, afterMs: number): Promise<{ killedAt: number; promotedAt: number }> {
  await new Promise((r) => setTimeout(r, afterMs));
  const before = await c.clusterMasters();
  await c.killClusterNode(port);
  const killedAt = Date.now();
  const until = killedAt + 60_000;
  for (;;) {
    const masters = await c.clusterMasters();
    if (masters.length === before.length && !masters.includes(port)) return { killedAt, promotedAt: Date.now() };
    if (Date.now() > until) throw new Error(`no replica took over from master ${port} within 60 s (masters now ${masters.join(', ')})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

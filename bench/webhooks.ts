/**
 * Webhook delivery: 10,000 events to 10 loopback endpoints (one per workspace, 1,000 events each)
 * through the real server (sequencer, queue, signed delivery). Prints deliveries per second at full
 * speed, then p50/p99 from an event's commit to the receiver's 200 while events arrive at half that rate.
 * Not part of npm test.
 *   npx tsx bench/webhooks.ts [--events 10000] [--rate <events/s for the latency step; default half the measured rate>]
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { BENCH_RATE_LIMITS, dropDatabase, dropQueuePrefix, fmt, recreateDatabase, startServer, stopServer, apiCaller } from './lib';

const arg = (name: string, def: number) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : def);
const EVENTS = arg('--events', 10_000);
const ENDPOINTS = 10;
const PORT = 3919;
const MASTER = 'bench-master-key-webhooks-0123';
const base = `http://127.0.0.1:${PORT}/api`;

const call = apiCaller(base);

/** Receivers record when each event (data.k) got its 200. */
function receivers(arrived: Map<number, number>): Promise<http.Server[]> {
  return Promise.all(
    Array.from({ length: ENDPOINTS }, () => {
      const s = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          const k = JSON.parse(Buffer.concat(chunks).toString()).data.k as number;
          res.writeHead(200).end();
          if (!arrived.has(k)) arrived.set(k, performance.timeOrigin + performance.now());
        });
      });
      s.keepAliveTimeout = 60_000;
      return new Promise<http.Server>((r) => s.listen(0, '127.0.0.1', () => r(s)));
    }),
  );
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function main() {
  const dbName = 'mpps_bench_webhooks';
  const dbUrl = await recreateDatabase(dbName);
  const prefix = `benchwh${Date.now()}`;
  const arrived = new Map<number, number>();
  const servers = await receivers(arrived);
  const server = await startServer(
    {
      DATABASE_URL: dbUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      MASTER_API_KEY: MASTER,
      QUEUE_PREFIX: prefix,
      SCHEDULER: 'false',
      ...BENCH_RATE_LIMITS,
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOW_PRIVATE: '1',
    },
    PORT,
  );
  const pg = new Client({ connectionString: dbUrl });
  await pg.connect();
  const committed = new Map<number, number>();
  let k = 0;
  const workspaces: string[] = [];
  /** One transaction of `n` events round-robin over the workspaces; its commit time stamps them. */
  async function commitBatch(n: number): Promise<void> {
    const ks = Array.from({ length: n }, () => k++);
    await pg.query('BEGIN');
    await pg.query(`INSERT INTO outbox (workspace_id, type, data) SELECT w, 'metric:updated', jsonb_build_object('k', k) FROM unnest($1::uuid[], $2::int[]) AS x(w, k)`, [
      ks.map((i) => workspaces[i % ENDPOINTS]),
      ks,
    ]);
    await pg.query('COMMIT');
    const at = performance.timeOrigin + performance.now();
    for (const i of ks) committed.set(i, at);
  }
  const waitAll = async (upTo: number, ms = 120_000) => {
    const end = Date.now() + ms;
    while (arrived.size < upTo) {
      if (Date.now() > end) throw new Error(`only ${arrived.size} of ${upTo} delivered`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  try {
    const owner = await call('POST', '/agents/register', { name: `whowner${Date.now() % 1e6}` }, {});
    const h = { 'x-agent-key': owner.apiKey };
    for (let i = 0; i < ENDPOINTS; i++) {
      const ws = await call('POST', '/workspaces', { name: `wh${i}`, public: true }, h);
      workspaces.push(ws.id);
      const port = (servers[i].address() as AddressInfo).port;
      await call('POST', '/hooks', { url: `http://127.0.0.1:${port}/hook`, events: ['metric:updated'] }, { ...h, 'x-workspace-id': ws.id });
    }
    // Warm-up (connections, prepared plans), not counted.
    await commitBatch(ENDPOINTS * 10);
    await waitAll(k);
    arrived.clear();
    committed.clear();

    // 1. Throughput: every event committed at once (batches of 100), then delivered as fast as it goes.
    const t0 = performance.timeOrigin + performance.now();
    const first = k;
    for (let i = 0; i < EVENTS / 100; i++) await commitBatch(100);
    await waitAll(EVENTS);
    const last = Math.max(...arrived.values());
    const rate = EVENTS / ((last - t0) / 1000);
    const lat1 = [...arrived].map(([key, at]) => at - committed.get(key)!);
    console.log(`# bench/webhooks: ${EVENTS} events to ${ENDPOINTS} endpoints (keys ${first}..${k - 1})`);
    console.log(`throughput: ${fmt(rate)} deliveries/s (commit of the first to the 200 of the last: ${fmt(last - t0)} ms)`);
    console.log(`  commit -> 200 under that burst: p50 ${fmt(pct(lat1, 50))} ms, p99 ${fmt(pct(lat1, 99))} ms`);

    // 2. Latency at half that rate: batches of 10 events, paced.
    arrived.clear();
    committed.clear();
    const half = arg('--rate', 0) || rate / 2;
    const n2 = Math.min(EVENTS, Math.round(half * 8));
    const batch = 10;
    const every = (batch / half) * 1000;
    const start = performance.now();
    for (let i = 0; i < n2 / batch; i++) {
      const due = start + i * every;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await commitBatch(batch);
    }
    await waitAll(n2);
    const lat2 = [...arrived].map(([key, at]) => at - committed.get(key)!);
    console.log(`latency at ${fmt(half)} events/s (${n2} events): p50 ${fmt(pct(lat2, 50))} ms, p99 ${fmt(pct(lat2, 99))} ms, max ${fmt(Math.max(...lat2))} ms`);
    console.log(`targets: >= 1000 deliveries/s ${rate >= 1000 ? 'met' : 'NOT met'}; p99 < 250 ms at half rate ${pct(lat2, 99) < 250 ? 'met' : 'NOT met'}`);
  } finally {
    await pg.end();
    await stopServer(server);
    for (const s of servers) s.close();
    await dropDatabase(dbName);
    console.log(`dropped ${await dropQueuePrefix(prefix)} Redis keys of ${prefix}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * Redis commands per trade request, per process (issue 29): split roles (npm run api + npm run
 * worker) on a private Redis watched with MONITOR; each client connection is mapped to its process
 * with `ss -tnp`. Commands inside MULTI/EXEC, and a script's own calls, are one round trip.
 *   npx tsx bench/redis-trips.ts [--trades 200]
 */
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { startPrivateRedis } from './cpu';
import { BENCH_RATE_LIMITS, apiCaller, dropDatabase, recreateDatabase, startServer, stopServer, arg } from './lib';

const TRADES = Number(arg('--trades')) || 200;
const PORT = 3934;
const REDIS_PORT = 6394;
const MASTER = 'bench-master-key-0123456789';
const base = `http://127.0.0.1:${PORT}/api`;
const DB = 'mpps_bench_redis_trips';
const call = apiCaller(base);

/** Local port of each connection to the private Redis -> pid of the process holding it. */
function connectionOwners(): Map<string, number> {
  const out = new Map<string, number>();
  const text = execFileSync('ss', ['-tnpH', `dport = :${REDIS_PORT}`], { encoding: 'utf8' });
  for (const line of text.split('\n')) {
    const m = /127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:\d+\s+users:\(\("[^"]*",pid=(\d+)/.exec(line);
    if (m) out.set(m[1], Number(m[2]));
  }
  return out;
}

async function main() {
  const url = await recreateDatabase(DB);
  const redis = await startPrivateRedis(REDIS_PORT);
  const env = { DATABASE_URL: url, REDIS_URL: `redis://127.0.0.1:${REDIS_PORT}` /* TCP even under BENCH_SOCKETS: connections are told apart by their ports */, MASTER_API_KEY: MASTER, QUEUE_PREFIX: `rt${Date.now()}`, SCHEDULER: 'false', ...BENCH_RATE_LIMITS };
  const api = await startServer(env, PORT, 'api');
  const worker = await startServer(env, PORT, 'worker');
  const monitor = new Redis({ port: REDIS_PORT, host: '127.0.0.1' });
  try {
    const owner = await call('POST', '/agents/register', { name: `o${Date.now() % 1e6}` }, {});
    await call('POST', `/agents/${owner.agentId}/credit`, { amount: 1e9 }, { 'x-api-key': MASTER });
    const ws = await call('POST', '/workspaces', { name: 'p', public: true, defaultLiquidityCredits: 10000 }, { 'x-agent-key': owner.apiKey });
    const h = { 'x-agent-key': owner.apiKey, 'x-workspace-id': ws.id, 'content-type': 'application/json' };
    for (let i = 0; i < 5; i++) await call('POST', '/metrics', { name: `m${i}`, value: 500 }, h);
    const ids = ((await call('GET', '/predictions/markets?limit=200', undefined, h)) as Array<{ id: string }>).map((m) => m.id);
    const trade = (i: number) => call('POST', '/predictions/trade', { marketId: ids[i % ids.length], direction: i % 2 ? 'higher' : 'lower', amount: 1 }, h);
    for (let i = 0; i < 20; i++) await trade(i); // warm-up: caches, scripts loaded, worker up
    const seen: Array<{ port: string; cmd: string }> = [];
    const mon = await monitor.monitor();
    mon.on('monitor', (_t: string, args: string[], source: string) => {
      seen.push({ port: source.split(':').pop()!, cmd: String(args[0]).toLowerCase() });
    });
    // One trader, one request at a time: every command seen belongs to these trades (or idle timers).
    for (let i = 0; i < TRADES; i++) await trade(i);
    await new Promise((r) => setTimeout(r, 300));
    mon.disconnect();
    const owners = connectionOwners();
    const roleOf = (port: string) => (port === 'lua' ? 'in-script' : owners.get(port) === api.pid ? 'api' : owners.get(port) === worker.pid ? 'worker' : 'other');
    const counts = new Map<string, { commands: number; trips: number; byCmd: Map<string, number> }>();
    const inMulti = new Set<string>();
    for (const { port, cmd } of seen) {
      const key = roleOf(port);
      const c = counts.get(key) ?? { commands: 0, trips: 0, byCmd: new Map() };
      counts.set(key, c);
      c.commands++;
      c.byCmd.set(cmd, (c.byCmd.get(cmd) ?? 0) + 1);
      if (cmd === 'multi') inMulti.add(port);
      else if (cmd === 'exec') inMulti.delete(port);
      else if (!inMulti.has(port) && key !== 'in-script') c.trips++;
    }
    console.log(`${TRADES} trade requests, one at a time; per trade request:`);
    for (const [role, c] of counts) {
      const cmds = [...c.byCmd].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(v / TRADES).toFixed(2)}`).join(', ');
      console.log(`  ${role.padEnd(6)} round trips ${(c.trips / TRADES).toFixed(2)}, commands ${(c.commands / TRADES).toFixed(2)} (${cmds})`);
    }
  } finally {
    monitor.disconnect();
    await stopServer(api);
    await stopServer(worker);
    await stopServer(redis);
    await dropDatabase(DB);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

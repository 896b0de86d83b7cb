/**
 * CPU cost of one trade per process (API+workers, Postgres, Redis, the load client) from /proc
 * over a 10 s closed loop: what bounds throughput on this machine. npx tsx bench/trade-cpu.ts
 */
import { readFileSync, readdirSync } from 'node:fs';
import { closedLoop, recreateDatabase, startServer, stopServer, dropDatabase, dropQueuePrefix, fmt } from './lib';
const PORT = 3933; const MASTER = 'bench-master-key-0123456789'; const base = `http://127.0.0.1:${PORT}/api`;
const TICK = 100;
function cpuOf(pred: (comm: string, pid: number) => boolean): number {
  let t = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      if (pred(comm, Number(d))) t += (Number(f[11]) + Number(f[12])) / TICK;
    } catch { /* gone */ }
  }
  return t;
}
async function call(method: string, path: string, body: unknown, headers: Record<string, string>) {
  const r = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await r.json(); if (r.status >= 400) throw new Error(JSON.stringify(json)); return json as any;
}
async function main() {
  const url = await recreateDatabase('mpps_bench_cpu');
  const prefix = `cpu${Date.now()}`;
  const server = await startServer({ DATABASE_URL: url, MASTER_API_KEY: MASTER, QUEUE_PREFIX: prefix, SCHEDULER: 'false', RATE_LIMIT_REGISTER_PER_HOUR: '100000', RATE_LIMIT_KEY_PER_MINUTE: '10000000' }, PORT);
  const owner = await call('POST', '/agents/register', { name: `o${Date.now() % 1e6}` }, {});
  await call('POST', `/agents/${owner.agentId}/credit`, { amount: 1e9 }, { 'x-api-key': MASTER });
  const ws = await call('POST', '/workspaces', { name: 'p', public: true, defaultLiquidityCredits: 10000 }, { 'x-agent-key': owner.apiKey });
  const h = { 'x-agent-key': owner.apiKey, 'x-workspace-id': ws.id, 'content-type': 'application/json' };
  for (let i = 0; i < 20; i++) await call('POST', '/metrics', { name: `m${i}`, value: 500 }, h);
  const markets: any[] = await call('GET', '/predictions/markets?limit=200', undefined, h);
  const send = async (i: number) => { const r = await fetch(`${base}/predictions/trade`, { method: 'POST', headers: h, body: JSON.stringify({ marketId: markets[i % 100].id, direction: i % 2 ? 'higher' : 'lower', amount: 1 }) }); await r.arrayBuffer(); return r.status === 200; };
  const serverPid = server.pid!;
  const parts = { server: (c: string, p: number) => p === serverPid, postgres: (c: string) => c.startsWith('postgres'), redis: (c: string) => c.startsWith('redis'), client: (_c: string, p: number) => p === process.pid };
  const before = Object.fromEntries(Object.entries(parts).map(([k, f]) => [k, cpuOf(f)]));
  const r = await closedLoop(8, 10, send);
  const after = Object.fromEntries(Object.entries(parts).map(([k, f]) => [k, cpuOf(f)]));
  console.log(`${r.ok} trades at ${fmt(r.tps)}/s (concurrency 8, 100 markets); CPU ms per trade:`);
  let total = 0;
  for (const k of Object.keys(parts)) { const ms = ((after[k] - before[k]) * 1000) / r.ok; total += ms; console.log(`  ${k.padEnd(9)} ${fmt(ms, 2)}`); }
  console.log(`  total     ${fmt(total, 2)}  (2 cores => ceiling ~${fmt(2000 / total, 0)} trades/s)`);
  await stopServer(server); await dropDatabase('mpps_bench_cpu'); await dropQueuePrefix(prefix);
}
main().catch((e) => { console.error(e); process.exit(1); });

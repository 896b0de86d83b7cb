/**
 * CPU time of the processes that serve a benchmark, from /proc (clock ticks of utime+stime): the
 * server processes by pid, Postgres backends connected to the bench database (their ps title names
 * it; the shared WAL writer and checkpointer are left out, as other databases feed them), a private
 * Redis started for the run (so other users of the shared one do not count), and the load client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { redisSocketPath } from './lib';

const TICK = 100;

function statCpu(pid: string): number {
  const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK;
}

/** Each Postgres backend's seconds of CPU in a snapshot, by pid (not enumerable: spreads and entries see the sum only). */
const BACKENDS = Symbol('backends');

/**
 * Seconds of CPU per part: `server` pids, Postgres backends of `db` (their sum), `redisPid`, this
 * process. The snapshot also keeps each backend's own figure, so cpuPerTrade counts a backend that a
 * pool closed between two snapshots as gone, not as the sum going backwards.
 */
export function cpuSnapshot(parts: { servers: Record<string, number>; db: string; redisPid?: number }): Record<string, number> {
  const out: Record<string, number> = { postgres: 0 };
  const backends = new Map<string, number>();
  Object.defineProperty(out, BACKENDS, { value: backends, enumerable: false });
  for (const [name, pid] of Object.entries(parts.servers)) out[name] = safe(() => statCpu(String(pid)));
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim();
      if (!comm.startsWith('postgres')) continue;
      const title = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (!title.includes(` ${parts.db} `)) continue;
      const cpu = statCpu(d);
      backends.set(d, cpu);
      out.postgres += cpu;
    } catch {
      /* gone */
    }
  }
  if (parts.redisPid) out.redis = safe(() => statCpu(String(parts.redisPid)));
  out.client = safe(() => statCpu(String(process.pid)));
  return out;
}

const safe = (f: () => number) => {
  try {
    return f();
  } catch {
    return 0;
  }
};

/**
 * CPU-ms per trade from two snapshots. A backend that exited between them is missing from `after`
 * (the pools keep theirs open for the run, so this stays small).
 */
export function cpuPerTrade(before: Record<string, number>, after: Record<string, number>, trades: number): Record<string, number> {
  const out: Record<string, number> = {};
  let server = 0;
  for (const k of Object.keys(after)) {
    const seconds = k === 'postgres' ? postgresSeconds(before, after) : Math.max(0, after[k] - (before[k] ?? 0));
    out[k] = (seconds * 1000) / trades;
    if (k !== 'client') server += out[k];
  }
  out.serverTotal = server;
  return out;
}

/**
 * Postgres's CPU seconds between two snapshots, backend by backend: one that started meanwhile counts
 * whole, one that exited meanwhile counts nothing (its last moments are lost, where the sum of all
 * backends fell by its whole life and could read as none at all, as run R's 8-client line did).
 */
function postgresSeconds(before: Record<string, number>, after: Record<string, number>): number {
  const b = (before as { [BACKENDS]?: Map<string, number> })[BACKENDS];
  const a = (after as { [BACKENDS]?: Map<string, number> })[BACKENDS];
  if (!a || !b) return Math.max(0, after.postgres - (before.postgres ?? 0));
  let s = 0;
  for (const [pid, cpu] of a) s += Math.max(0, cpu - (b.get(pid) ?? 0));
  return s;
}

/**
 * CPU-ms per trade of a load (`raw`, from cpuPerTrade) with what the idle service burns over the same
 * time taken off (`idleMsPerS`, from cpuPerTrade over an idle spell in seconds): the trades' own cost.
 */
export function netOfIdle(raw: Record<string, number>, idleMsPerS: Record<string, number>, load: { ok: number; tps: number }): Record<string, number> {
  const elapsed = load.ok / load.tps;
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Math.max(0, v - ((idleMsPerS[k] ?? 0) * elapsed) / load.ok)]));
}

/** Seconds the whole machine's CPUs were busy since boot (idle and iowait left out): for loads whose processes come and go, such as pgbench's. */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return (user + nice + system + irq + softirq + steal) / TICK;
}

/** A private Redis for the run on `port`, no persistence; stop it with stopServer (lib.ts). */
export async function startPrivateRedis(port: number): Promise<ChildProcess> {
  const socket = ['--unixsocket', redisSocketPath(port), '--unixsocketperm', '700'];
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...socket, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
  const { Redis } = await import('ioredis');
  for (let i = 0; i < 100; i++) {
    // A PONG from a server that is not ours (the last run's, still exiting) would leave the service
    // with no Redis once that one goes (seen once: every trade of a run answered pending after 30 s).
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): port ${port} taken?`);
    const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined); // not up yet: the connect below fails and the loop tries again
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      if (child.exitCode === null) return child;
    } catch {
      r.disconnect();
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  child.kill('SIGKILL');
  throw new Error('private redis did not start');
}

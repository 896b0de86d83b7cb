import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from '../helpers/services';

/**
 * main.ts as an operator starts it (a child process, a fresh database): a port clash stops the first
 * start with one sentence, before a master key is generated; the next start on a free port then
 * generates and prints the key, and that key works. A start whose Postgres connections are
 * terminated while it migrates starts again instead of exiting.
 */
const ROOT = path.join(__dirname, '..', '..');

interface Run {
  /** stdout and stderr as they arrived. */
  out: string;
  err: string;
  exited: Promise<number | null>;
  waitFor(re: RegExp, ms: number): Promise<RegExpMatchArray>;
  stop(): Promise<number | null>;
}

function startMain(env: Record<string, string>): Run {
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete full.MASTER_API_KEY; // the service generates one
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: full, stdio: ['ignore', 'pipe', 'pipe'] });
  const run: Run = {
    out: '',
    err: '',
    exited: new Promise((r) => child.once('exit', (code) => r(code))),
    async waitFor(re, ms) {
      for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
        const m = re.exec(run.out);
        if (m) return m;
        if (child.exitCode !== null) break;
      }
      throw new Error(`main did not print ${re} (exit ${child.exitCode}); it printed:\n${run.out}`);
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return run.exited;
    },
  };
  for (const s of [child.stdout!, child.stderr!]) s.on('data', (b: Buffer) => (run.out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (run.err += b.toString()));
  return run;
}

const listen = (srv: Server, port = 0, host?: string) => new Promise<number>((r) => srv.listen(port, host, () => r((srv.address() as { port: number }).port)));

let database: string;
let database2: string;
let holder: Server;
const runs: Run[] = [];
beforeAll(() => {
  database = `mpps_startup_${randomBytes(4).toString('hex')}`;
  database2 = `${database}_2`;
  holder = createServer();
});

function adminUrl(): string {
  const admin = new URL(process.env.DATABASE_URL!);
  admin.pathname = '/postgres';
  return admin.toString();
}
afterAll(async () => {
  await Promise.all(runs.map((r) => r.stop()));
  if (holder.listening) holder.close();
  const c = new Client({ connectionString: adminUrl() });
  await c.connect();
  for (const name of [database, database2]) await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await c.end();
});

it('a port clash stops the first start with one sentence and no key; the next start prints a key that works', async () => {
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${database}`;
  const env = { DATABASE_URL: url.toString(), QUEUE_BACKEND: 'postgres', QUEUE_PREFIX: 'startup', TRADE_LANES: '1', SCHEDULER: 'false', LOG_LEVEL: 'info' };
  const taken = await listen(holder);

  const first = startMain({ ...env, PORT: String(taken) });
  runs.push(first);
  expect(await first.exited).toBe(1);
  const sentence = `Port ${taken} is in use: stop what holds it or set PORT.`;
  expect(first.err.split('\n')).toContain(sentence); // a line of its own on stderr
  expect(first.out).not.toMatch(/\n\s+at /); // no stack trace
  expect(first.out).not.toContain('"stack"');
  expect(first.out).not.toContain('MASTER_API_KEY=');

  // The operator frees the port and starts again.
  await new Promise((r) => holder.close(r));
  const port = taken;
  // A pool larger than the server's max_connections: the start says so in one sentence, and serves.
  const second = startMain({ ...env, PORT: String(port), DATABASE_POOL_MAX: '1000' });
  runs.push(second);
  const [, key] = await second.waitFor(/MASTER_API_KEY=(\S+)/, 30_000);
  await second.waitFor(/"msg":"started"/, 30_000);
  // The pool (the account system shares it), the LISTEN client and the Postgres queues' 12 + 1.
  await second.waitFor(/"msg":"this process opens at most 1014 connections to the primary"/, 1000);
  await second.waitFor(/"msg":"This process may open 1014 connections to the primary, which already has \d+ open of max_connections \d+ \(\d+ reserved for superusers\): lower DATABASE_POOL_MAX/, 1000);
  const base = `http://127.0.0.1:${port}/api`;
  const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const agent = (await (await post('/agents/register', { name: `start-${randomBytes(3).toString('hex')}`, operator: 'ops@example.com' })).json()) as { agentId: string };
  expect((await post(`/agents/${agent.agentId}/credit`, { amount: 5, reason: 'startup test' }, { 'X-API-Key': 'mpk_not_the_key_at_all_000000' })).status).toBe(401);
  expect((await post(`/agents/${agent.agentId}/credit`, { amount: 5, reason: 'startup test' }, { 'X-API-Key': key })).status).toBe(200);
  expect(await second.stop()).toBe(0);
});

it('a start whose Postgres connections are terminated while it migrates starts again and serves', async () => {
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${database2}`;
  const port = await freePort();
  const run = startMain({ DATABASE_URL: url.toString(), QUEUE_BACKEND: 'postgres', QUEUE_PREFIX: 'startup2', TRADE_LANES: '1', SCHEDULER: 'false', LOG_LEVEL: 'info', PORT: String(port) });
  runs.push(run);

  // Every backend of the new database is terminated as soon as it shows, for one second from the first.
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  let terminated = 0;
  try {
    let first = 0;
    for (const until = Date.now() + 30_000; Date.now() < until && !(first && Date.now() - first > 1000); await new Promise((r) => setTimeout(r, 10))) {
      const r = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'", [database2]);
      if (r.rowCount) {
        terminated += r.rowCount;
        first ||= Date.now();
      }
    }
  } finally {
    await admin.end();
  }
  expect(terminated).toBeGreaterThan(0);

  await run.waitFor(/"msg":"started"/, 60_000);
  // The terminations hit the start (not only a started process), and it started again rather than exiting.
  expect(run.out).toMatch(/"attempt":1,.*starting again/);
  expect(run.out).not.toContain('"level":60');
  // One master key printed, and it is the one stored: a start cut off before its commit printed none.
  const keys = [...run.out.matchAll(/MASTER_API_KEY=(\S+)/g)].map((m) => m[1]);
  expect(keys).toHaveLength(1);
  const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}/api${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const answer = await post('/agents/register', { name: `again-${randomBytes(3).toString('hex')}`, operator: 'ops@example.com' });
  expect(answer.status).toBe(201);
  const { agentId } = (await answer.json()) as { agentId: string };
  expect((await post(`/agents/${agentId}/credit`, { amount: 5, reason: 'startup test' }, { 'X-API-Key': keys[0] })).status).toBe(200);
  expect(await run.stop()).toBe(0);
}, 90_000);

it('a start whose database address drops every connection tries 6 times, answers the requests that waited with a 503 and exits 1', async () => {
  // Something listens at the database address and hangs up on every connection: each attempt loses
  // its connection (not refused), so the start tries again, backing off, then gives up.
  const dropper = createServer((socket) => socket.destroy());
  const dbPort = await listen(dropper, 0, '127.0.0.1');
  const port = await freePort();
  try {
    const started = Date.now();
    const run = startMain({ DATABASE_URL: `postgres://postgres@127.0.0.1:${dbPort}/mpps_dropped`, QUEUE_BACKEND: 'postgres', QUEUE_PREFIX: 'startup3', SCHEDULER: 'false', LOG_LEVEL: 'info', PORT: String(port) });
    runs.push(run);
    await run.waitFor(/"attempt":1,.*starting again/, 60_000);
    // The port is bound before the database: this request waits for a start that will not come.
    const answer = await fetch(`http://127.0.0.1:${port}/api/status`, { headers: { 'X-Request-Id': 'waited-for-start' } });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(answer.headers.get('x-request-id')).toBe('waited-for-start');
    expect(((await answer.json()) as { code: string }).code).toBe('service_unavailable');
    expect(await run.exited).toBe(1);
    expect([...run.out.matchAll(/starting again/g)]).toHaveLength(5);
    expect(Date.now() - started).toBeGreaterThan(12_000); // 0.5 + 1 + 2 + 4 + 5 s of waiting
    expect(run.out).not.toContain('MASTER_API_KEY=');
  } finally {
    dropper.close();
  }
}, 90_000);

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { Client } from 'pg';

/**
 * main.ts as an operator starts it (a child process, a fresh database): a port clash stops the first
 * start with one sentence, before a master key is generated; the next start on a free port then
 * generates and prints the key, and that key works.
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

const listen = (srv: Server, port = 0) => new Promise<number>((r) => srv.listen(port, () => r((srv.address() as { port: number }).port)));

let database: string;
let holder: Server;
const runs: Run[] = [];
beforeAll(() => {
  database = `mpps_startup_${randomBytes(4).toString('hex')}`;
  holder = createServer();
});
afterAll(async () => {
  await Promise.all(runs.map((r) => r.stop()));
  if (holder.listening) holder.close();
  const admin = new URL(process.env.DATABASE_URL!);
  admin.pathname = '/postgres';
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
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
  const second = startMain({ ...env, PORT: String(port) });
  runs.push(second);
  const [, key] = await second.waitFor(/MASTER_API_KEY=(\S+)/, 30_000);
  await second.waitFor(/"msg":"started"/, 30_000);
  const base = `http://127.0.0.1:${port}/api`;
  const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const agent = (await (await post('/agents/register', { name: `start-${randomBytes(3).toString('hex')}`, operator: 'ops@example.com' })).json()) as { agentId: string };
  expect((await post(`/agents/${agent.agentId}/credit`, { amount: 5, reason: 'startup test' }, { 'X-API-Key': 'mpk_not_the_key_at_all_000000' })).status).toBe(401);
  expect((await post(`/agents/${agent.agentId}/credit`, { amount: 5, reason: 'startup test' }, { 'X-API-Key': key })).status).toBe(200);
  expect(await second.stop()).toBe(0);
});

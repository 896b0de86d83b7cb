/**
 * The clean-machine check (.ci/run): `npm start` with nothing configured and the system's Postgres
 * and Redis hidden (PROBE_PORTS points the default-port probe at ports where nothing listens), so
 * the service starts its embedded Postgres with every queue on it; then one trade over HTTP, then
 * SIGTERM, and the process must stop cleanly with its Postgres.
 * Usage: tsx scripts/smoke-embedded.ts   (exit 0 = passed)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const freePort = () =>
  new Promise<number>((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });

async function main(): Promise<void> {
  const started = Date.now();
  const [port, noPg, noRedis] = [await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'mpps-smoke-'));
  chmodSync(dir, 0o755); // as root, Postgres runs as the user postgres, who must reach its data directory
  const masterKey = `smoke-${randomBytes(12).toString('hex')}`;
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), PROBE_PORTS: `${noPg},${noRedis}`, EMBEDDED_PG_DIR: join(dir, 'pg'), MASTER_API_KEY: masterKey, LOG_LEVEL: 'info' };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'QUEUE_BACKEND']) delete env[k];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const s of [child.stdout, child.stderr]) s.on('data', (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const fail = (why: string): never => {
    child.kill('SIGKILL');
    throw new Error(`${why}\n--- service output ---\n${lines.slice(-30).join('\n')}`);
  };
  try {
    for (let i = 0; !lines.some((l) => l.includes('"msg":"started"')); i++) {
      if (child.exitCode !== null) fail('the service exited before it started');
      if (i > 1200) fail('the service did not start within 120 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const modeLine = lines.find((l) => l.includes('services: zero-setup'));
    if (!modeLine) fail('no "services: zero-setup" line: the service did not run in embedded mode');
    const base = `http://127.0.0.1:${port}/api`;
    const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = (await res.json().catch(() => null)) as Record<string, string>;
      if (res.status >= 300) fail(`${method} ${path} answered ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const owner = await call('POST', '/agents/register', { name: `smoke-${randomBytes(3).toString('hex')}`, operator: 'ops@example.com' });
    await call('POST', `/agents/${owner.agentId}/credit`, { amount: 100_000, reason: 'smoke' }, { 'X-API-Key': masterKey });
    const key = { 'X-Agent-Key': owner.apiKey as string };
    const ws = await call('POST', '/workspaces', { name: `smoke-${randomBytes(3).toString('hex')}`, public: true }, key);
    const inWs = { ...key, 'X-Workspace-Id': ws.id as string };
    const metric = await call('POST', '/metrics', { name: 'smoke', value: 500 }, inWs);
    const markets = await call('GET', `/predictions/markets?metricId=${metric.id}&limit=5`, undefined, inWs);
    const market = (markets as unknown as Array<{ id: string }>)[0];
    if (!market) fail('the new metric opened no market');
    const traded = await call('POST', '/predictions/trade', { marketId: market.id, direction: 'higher', amount: 10 }, { ...inWs, 'Idempotency-Key': randomBytes(8).toString('hex') });
    console.log(`smoke: trade ${JSON.stringify(traded).slice(0, 160)}`);
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000))]);
    if (code !== 0) fail(`after SIGTERM the service ended with ${code}, not 0`);
    if (!lines.some((l) => l.includes('embedded Postgres stopped'))) fail('the embedded Postgres was not stopped');
    console.log(`smoke: embedded mode started, traded and stopped cleanly in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});

/**
 * The clean-machine check (.ci/run): `npm start` with nothing configured and the system's Postgres
 * and Redis hidden (PROBE_PORTS points the default-port probe at ports where nothing listens), so
 * the service builds, starts its embedded Postgres with every queue on it; then one trade over HTTP,
 * then SIGTERM to exactly the PID that spawning `npm start` gave (what `$!`, systemd or a container
 * runtime signals). npm must end with 0, and afterwards no process of the run may be left: none
 * carrying this run's marker in its environment (the service, its Postgres and every backend
 * inherit it), none naming the data directory, and neither the HTTP port nor Postgres' port answers.
 * Usage: tsx scripts/smoke-embedded.ts   (exit 0 = passed)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, freePort, leftovers } from './lib/procs';

async function main(): Promise<void> {
  const started = Date.now();
  const [port, noPg, noRedis] = [await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'mpps-smoke-'));
  chmodSync(dir, 0o755); // as root, Postgres runs as the user postgres, who must reach its data directory
  const masterKey = `smoke-${randomBytes(12).toString('hex')}`;
  const marker = `MPPS_SMOKE_RUN=${randomBytes(8).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    PROBE_PORTS: `${noPg},${noRedis}`,
    EMBEDDED_PG_DIR: join(dir, 'pg'),
    MASTER_API_KEY: masterKey,
    LOG_LEVEL: 'info',
    [marker.split('=')[0]]: marker.split('=')[1],
  };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'QUEUE_BACKEND']) delete env[k];
  const child = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const s of [child.stdout, child.stderr]) s.on('data', (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // Everything this run started (npm, the service, its Postgres) is killed on the way out, whatever happened.
  const killAll = () => {
    for (const l of leftovers(marker, dir)) process.kill(Number(l.split(' ')[0]), 'SIGKILL');
  };
  const fail = (why: string): never => {
    killAll();
    throw new Error(`${why}\n--- service output ---\n${lines.slice(-30).join('\n')}`);
  };
  try {
    for (let i = 0; !lines.some((l) => l.includes('"msg":"started"')); i++) {
      if (child.exitCode !== null) fail('the service exited before it started');
      if (i > 1200) fail('the service did not start within 120 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const startedIn = (Date.now() - started) / 1000;
    const modeLine = lines.find((l) => l.includes('services: zero-setup'));
    if (!modeLine) fail('no "services: zero-setup" line: the service did not run in embedded mode');
    const pgPort = Number(/127\.0\.0\.1:(\d+)\//.exec(modeLine!)?.[1]);
    if (!pgPort) fail('the "services:" line names no Postgres port');
    const before = leftovers(marker, dir).length;
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
    // Files read at run time resolve from dist/ as from src/: a guide from docs/, the reference page's script from node_modules.
    const guide = await fetch(`${base}/guides/get-paid`).then((r) => r.text());
    if (!guide.includes('## Depositing')) fail(`GET /api/guides/get-paid did not serve docs/guides/get-paid.md: ${guide.slice(0, 120)}`);
    const bundle = await fetch(`${base}/reference/swagger-ui-bundle.js`);
    if (bundle.status !== 200 || (await bundle.text()).length < 100_000) fail(`GET /api/reference/swagger-ui-bundle.js answered ${bundle.status} without the bundle`);
    // The web pages (src/web) from dist/: a workspace page and its script and uPlot from node_modules.
    const site = base.replace(/\/api$/, '');
    const home = await fetch(`${site}/w/${ws.slug as string}`).then(async (r) => ({ status: r.status, text: await r.text() }));
    if (home.status !== 200 || !home.text.includes('data-metric')) fail(`GET /w/${ws.slug as string} answered ${home.status} without the metrics: ${home.text.slice(0, 120)}`);
    for (const file of ['app.js', 'uPlot.iife.min.js']) {
      const r = await fetch(`${site}/assets/${file}`);
      if (r.status !== 200 || (await r.text()).length < 1000) fail(`GET /assets/${file} answered ${r.status} without the script`);
    }
    process.kill(child.pid!, 'SIGTERM');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000).unref())]);
    // Allow a moment for the last Postgres backends to go; an orphan stays for good.
    let left = leftovers(marker, dir);
    for (let i = 0; left.length && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = leftovers(marker, dir);
    }
    if (left.length) {
      fail(`after SIGTERM to npm start (pid ${child.pid}, which ended with ${code}) ${left.length} of its ${before} processes were left running:\n${left.join('\n')}`);
    }
    if (code !== 0) fail(`after SIGTERM to npm start (pid ${child.pid}) it ended with ${code}, not 0`);
    for (const [what, p] of [['the HTTP port', port], ["the embedded Postgres' port", pgPort]] as const) if (await answers(p)) fail(`after SIGTERM ${what} ${p} still answers`);
    if (!lines.some((l) => l.includes('embedded Postgres stopped'))) fail('the embedded Postgres was not stopped');
    console.log(`smoke: npm start (build included) up in ${startedIn.toFixed(1)} s with ${before} processes; traded; SIGTERM to its pid left 0 processes; total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    killAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});

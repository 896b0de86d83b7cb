/**
 * The profile behind a slow route (issue 60): on a database bench/scale left (BENCH_KEEP=1), every
 * statement a route runs that takes longer than --min ms is logged with its plan, timed
 * (auto_explain, log_analyze, buffers), and the plans are printed beside the route's timing.
 *   BENCH_DB=mpps_scale_prof npx tsx bench/profileRoutes.ts [--min 5] [--requests 5] /api/events /participants/p7 ...
 * Reads the server's log file (PG_LOG, default the Debian cluster's); writes nothing but a key.
 */
import { randomUUID } from 'node:crypto';
import { openSync, readSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { Client } from 'pg';
import { createApp } from '../src/doors';
import { loadConfig } from '../src/config';
import { ensurePlatform } from '../src/services/identity';
import { bootDeps, closeDeps } from '../src/runtime';
import { catalogIds } from './scaleSeed';
import { arg, PG_BASE } from './lib';

const DB = process.env.BENCH_DB ?? 'mpps_bench_scale';
const LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const MIN = Number(arg('--min') ?? 5);
const REQUESTS = Number(arg('--requests') ?? 5);
const paths = process.argv.slice(2).filter((a, i, all) => a.startsWith('/') && !['--min', '--requests'].includes(all[i - 1] ?? ''));

function logSince(offset: number): string {
  const size = statSync(LOG).size;
  const buf = Buffer.alloc(Math.max(0, size - offset));
  const fd = openSync(LOG, 'r');
  readSync(fd, buf, 0, buf.length, offset);
  return buf.toString('utf8');
}

async function main(): Promise<void> {
  const admin = new Client({ connectionString: `${PG_BASE}/${DB}` });
  await admin.connect();
  // Every new connection of the app to this database loads auto_explain with these settings.
  await admin.query(`ALTER DATABASE ${DB} SET session_preload_libraries = 'auto_explain'`);
  await admin.query(`ALTER DATABASE ${DB} SET auto_explain.log_min_duration = ${MIN}`);
  await admin.query(`ALTER DATABASE ${DB} SET auto_explain.log_analyze = on`);
  await admin.query(`ALTER DATABASE ${DB} SET auto_explain.log_buffers = on`);
  await admin.query(`ALTER DATABASE ${DB} SET auto_explain.log_nested_statements = on`);
  const config = loadConfig({ ...process.env, DATABASE_URL: `${PG_BASE}/${DB}`, LOG_LEVEL: 'warn', SCHEDULER: 'false', RATE_LIMIT_KEY_PER_MINUTE: '100000000', QUEUE_PREFIX: `benchprof${Date.now()}` });
  const deps = await bootDeps(config, { migrate: true, poolSize: 4 });
  let server: Server | undefined;
  try {
    const master = `master-${randomUUID()}`;
    await ensurePlatform(deps.ds, master);
    const ids = await catalogIds((sql, params = []) => deps.ds.query(sql, params));
    server = createApp(deps).listen(0, '127.0.0.1');
    await new Promise<void>((r) => server!.once('listening', () => r()));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const minted = await fetch(`${base}/api/agents/${ids.agent}/keys`, { method: 'POST', headers: { 'content-type': 'application/json', 'X-API-Key': master }, body: JSON.stringify({ label: 'profile' }) });
    const key = ((await minted.json()) as { apiKey: string }).apiKey;
    for (const path of paths) {
      const times: number[] = [];
      await fetch(`${base}${path}`, { headers: { 'X-Agent-Key': key, 'X-Workspace-Id': ids.workspaceId } }); // warm-up
      const offset = statSync(LOG).size;
      for (let i = 0; i < REQUESTS; i++) {
        const s = performance.now();
        const r = await fetch(`${base}${path}`, { headers: { 'X-Agent-Key': key, 'X-Workspace-Id': ids.workspaceId } });
        await r.arrayBuffer();
        times.push(performance.now() - s);
      }
      await new Promise((r) => setTimeout(r, 300)); // the log is written asynchronously
      const plans = logSince(offset)
        .split(/\n(?=\S+ \S+ \S+ \[\d+\])/)
        .filter((e) => e.includes('duration:') && e.includes('plan:'));
      const seen = new Set<string>();
      console.log(`\n## ${path}: ${times.map((t) => t.toFixed(1)).join(', ')} ms; ${plans.length} statements over ${MIN} ms`);
      for (const p of plans) {
        const text = p.replace(/^.*?LOG:\s+/, '');
        const key = text.replace(/duration: [\d.]+ ms/, '').replace(/actual time=[^)]*\)/g, '').slice(0, 300);
        if (seen.has(key)) continue;
        seen.add(key);
        console.log(text.split('\n').slice(0, 40).join('\n'));
      }
    }
  } finally {
    if (server) await new Promise((r) => server!.close(r));
    await closeDeps(deps);
    for (const s of ['session_preload_libraries', 'auto_explain.log_min_duration', 'auto_explain.log_analyze', 'auto_explain.log_buffers', 'auto_explain.log_nested_statements']) {
      await admin.query(`ALTER DATABASE ${DB} RESET ${s}`);
    }
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

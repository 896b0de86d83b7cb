/**
 * How long `npm start` takes to answer (issue 56; figures, not a test): the first start after an
 * install (no dist/, no data: the build, the embedded Postgres' initdb, the migrations, the master
 * key) and a later start (built, data kept). Like the clean-machine check, the default-port probe
 * points at ports where nothing listens (PROBE_PORTS), so the zero-setup layout runs. Each start is
 * timed from spawning `npm start` to the first 200 of GET /api/health; its output is scanned for
 * warnings (a DeprecationWarning, an ExperimentalWarning). Targets: 15 s and 5 s.
 *   npx tsx scripts/start-times.ts [--later 3]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, leftovers } from './lib/procs';

const ROOT = join(__dirname, '..');

async function timedStart(env: NodeJS.ProcessEnv, port: number, marker: string, dir: string): Promise<{ seconds: number; warnings: string[] }> {
  const started = performance.now();
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const s of [child.stdout, child.stderr]) s.on('data', (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited:\n${lines.slice(-20).join('\n')}`);
      if (performance.now() - started > 180_000) throw new Error(`npm start did not answer within 180 s:\n${lines.slice(-20).join('\n')}`);
      const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.status === 200, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    process.kill(child.pid!, 'SIGTERM');
    await exited;
    return { seconds, warnings: lines.filter((l) => /Warning|npm warn/i.test(l)) };
  } finally {
    for (const l of leftovers(marker, dir)) process.kill(Number(l.split(' ')[0]), 'SIGKILL');
  }
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--later');
  const laterRuns = at > 0 ? Number(process.argv[at + 1]) : 3;
  const [port, noPg, noRedis] = [await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'mpps-start-'));
  chmodSync(dir, 0o755); // as root, Postgres runs as the user postgres, who must reach its data directory
  const marker = `MPPS_START_RUN=${randomBytes(8).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    PROBE_PORTS: `${noPg},${noRedis}`,
    EMBEDDED_PG_DIR: join(dir, 'pg'),
    LOG_LEVEL: 'info',
    [marker.split('=')[0]]: marker.split('=')[1],
  };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'QUEUE_BACKEND', 'MASTER_API_KEY', 'NODE_OPTIONS']) delete env[k];
  try {
    rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
    const first = await timedStart(env, port, marker, dir);
    console.log(`first npm start (build, initdb, migrations): answered in ${first.seconds.toFixed(1)} s (target 15 s)`);
    const later: number[] = [];
    const warnings = new Set(first.warnings);
    for (let i = 0; i < laterRuns; i++) {
      const run = await timedStart(env, port, marker, dir);
      later.push(run.seconds);
      for (const w of run.warnings) warnings.add(w);
    }
    later.sort((a, b) => a - b);
    console.log(`later npm start (built, data kept), ${laterRuns} runs: median ${later[Math.floor(later.length / 2)].toFixed(1)} s, max ${later[later.length - 1].toFixed(1)} s (target 5 s)`);
    console.log(warnings.size ? `warnings printed:\n  ${[...warnings].join('\n  ')}` : 'no warnings printed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});

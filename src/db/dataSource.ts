import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { migrations } from '../../migrations';
import { entities } from '../entities';
import { logger } from '../logger';

export function makeDataSource(url: string, poolSize = 20): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities,
    migrations,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: { max: poolSize },
  });
}

/** CREATE DATABASE when the target database does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`Database name "${name}" must hold letters, digits, _ and - only.`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
        logger.info({ database: name }, 'created database');
      } catch (err) {
        if ((err as { code?: string }).code !== '42P04') throw err; // created concurrently
      }
    }
  } finally {
    await client.end();
  }
}

export async function openDatabase(url: string, opts: { migrate: boolean; poolSize?: number }): Promise<DataSource> {
  await ensureDatabase(url);
  const ds = makeDataSource(url, opts.poolSize);
  await ds.initialize();
  if (opts.migrate) {
    // One migrator at a time when several processes start together.
    await ds.query('SELECT pg_advisory_lock(727274)');
    try {
      const ran = await ds.runMigrations({ transaction: 'each' });
      if (ran.length) logger.info({ migrations: ran.map((m) => m.name) }, 'ran migrations');
    } finally {
      await ds.query('SELECT pg_advisory_unlock(727274)');
    }
  }
  return ds;
}

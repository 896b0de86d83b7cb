import { makeDataSource, ensureDatabase } from '../../src/db/dataSource';
import { isListening, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/boot/localServices';

/**
 * One database per test run, migrated once; every test file shares it with its own queue prefix.
 * With nothing configured and nothing on the default ports (PROBE_PORTS), the run starts an embedded
 * Postgres under .data/pg-test (stopped by globalTeardown) and puts the queues on it.
 */
export default async function globalSetup(): Promise<void> {
  let base = process.env.TEST_DATABASE_BASE;
  if (!base) {
    const [pgPort, redisPort] = (process.env.PROBE_PORTS ?? '5432,6379').split(',').map(Number);
    if (await isListening('127.0.0.1', pgPort)) base = `postgres://postgres@127.0.0.1:${pgPort}`;
    else {
      const pg = await startEmbeddedPostgres(process.env.EMBEDDED_PG_TEST_DIR ?? '.data/pg-test', 'postgres');
      (globalThis as { mppsEmbeddedPg?: EmbeddedPostgresHandle }).mppsEmbeddedPg = pg;
      base = pg.url.replace(/\/postgres$/, '');
    }
    if (!process.env.REDIS_URL && !process.env.QUEUE_BACKEND && !(await isListening('127.0.0.1', redisPort))) process.env.QUEUE_BACKEND = 'postgres';
  }
  const name = `mpps_test_${Date.now()}_${process.pid}`;
  const url = `${base}/${name}`;
  await ensureDatabase(url);
  const ds = makeDataSource(url, 2);
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
  await ds.destroy();
  process.env.DATABASE_URL = url;
  if (process.env.QUEUE_BACKEND !== 'postgres') process.env.REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
  // globalTeardown runs in this same process and reads it back from here.
  process.env.MPPS_TEST_DATABASE_URL = url;
}

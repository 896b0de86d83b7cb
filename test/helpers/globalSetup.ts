import { makeDataSource, ensureDatabase } from '../../src/db/dataSource';

/** One database per test run, migrated once; every test file shares it with its own queue prefix. */
export default async function globalSetup(): Promise<void> {
  const base = process.env.TEST_DATABASE_BASE ?? 'postgres://postgres@127.0.0.1:5432';
  const name = `mpps_test_${Date.now()}_${process.pid}`;
  const url = `${base}/${name}`;
  await ensureDatabase(url);
  const ds = makeDataSource(url, 2);
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
  await ds.destroy();
  process.env.DATABASE_URL = url;
  process.env.REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
  // globalTeardown runs in this same process and reads it back from here.
  process.env.MPPS_TEST_DATABASE_URL = url;
}

import { Client } from 'pg';
import type { EmbeddedPostgresHandle } from '../../src/boot/localServices';

export default async function globalTeardown(): Promise<void> {
  try {
    await dropTestDatabase();
  } finally {
    // The embedded Postgres globalSetup started, if any.
    await (globalThis as { mppsEmbeddedPg?: EmbeddedPostgresHandle }).mppsEmbeddedPg?.stop();
  }
}

async function dropTestDatabase(): Promise<void> {
  const url = process.env.MPPS_TEST_DATABASE_URL;
  if (!url || process.env.KEEP_TEST_DB) return;
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const c = new Client({ connectionString: u.toString() });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await c.end();
}

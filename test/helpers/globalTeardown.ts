import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

export default async function globalTeardown(): Promise<void> {
  const file = join(__dirname, '.test-db');
  const url = readFileSync(file, 'utf8');
  rmSync(file, { force: true });
  if (process.env.KEEP_TEST_DB) return;
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const c = new Client({ connectionString: u.toString() });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await c.end();
}

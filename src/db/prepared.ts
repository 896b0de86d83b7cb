import { createHash } from 'node:crypto';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';

interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

const names = new Map<string, string>();

function nameOf(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `prep_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (names.size < 64) names.set(text, name);
  }
  return name;
}

async function run<T>(client: PgClient, text: string, values: unknown[]): Promise<T[]> {
  try {
    return (await client.query({ name: nameOf(text), text, values })).rows as T[];
  } catch (err) {
    throw new QueryFailedError(text, values, err as Error);
  }
}

/**
 * Run a hot statement as a named prepared statement on the transaction's connection: Postgres parses
 * and plans it once per connection instead of on every call (the trade's write, a dozen CTEs, spent
 * more time being parsed and planned than executed). Only for statements whose text is constant, the
 * parameters carrying everything that varies. Outside a transaction (or on a released runner) it
 * runs as an ordinary query; errors are TypeORM's QueryFailedError, as from `m.query`.
 */
export async function queryPrepared<T = Record<string, unknown>>(m: EntityManager, text: string, values: unknown[]): Promise<T[]> {
  const qr = m.queryRunner;
  if (!qr || qr.isReleased || !qr.isTransactionActive) return m.query(text, values);
  return run<T>((await qr.connect()) as PgClient, text, values);
}

/**
 * The same for a hot statement that stands alone (the trade journal's INSERT, once per batch on the
 * API): prepared on whichever pool connection runs it, each preparing it once.
 */
export async function poolPrepared<T = Record<string, unknown>>(ds: DataSource, text: string, values: unknown[]): Promise<T[]> {
  return run<T>((ds.driver as unknown as { master: PgClient }).master, text, values);
}

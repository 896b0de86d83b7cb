import { hash as digest } from 'node:crypto';
import { QueryFailedError, type DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { encodeArrays } from './arrayLiteral';

interface PgClient {
  query(config: { name: string; text: string; values: unknown[] } | string): Promise<{ rows: unknown[]; command?: string }>;
  /** node-postgres's pipeline mode: each query goes out at once, each with its own Sync. */
  pipeline?: boolean;
  /** Its socket: corked around a pipelined burst, so the burst is one write, not one per statement. */
  connection?: { stream?: { cork?(): void; uncork?(): void } };
}

interface PgPool {
  connect(): Promise<PgClient & { release(err?: Error | boolean): void }>;
}

/**
 * How long a connection keeps the plans of its named statements. A generic plan is made once and kept
 * until the table's statistics change; made while a table was small (a new database, the first
 * minute of a deployment), it scans what an index should find, and kept while the table grows, it
 * costs more with every row: a batch's read of 10,000 journal rows spent 9 ms in a sequential scan
 * for its 30 ids. Each connection drops its plans this often (DISCARD PLANS keeps the statements),
 * so every plan is at most this old, made on the tables as they are.
 */
export const PLAN_TTL_MS = 1_000;
const plannedAt = new WeakMap<object, number>();

async function freshPlans(client: PgClient): Promise<void> {
  const now = Date.now();
  const at = plannedAt.get(client);
  if (at === undefined) plannedAt.set(client, now);
  else if (now - at > PLAN_TTL_MS) {
    plannedAt.set(client, now);
    await client.query('DISCARD PLANS');
  }
}

const names = new Map<string, string>();

function nameOf(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `prep_${digest('sha1', text, 'hex').slice(0, 24)}`;
    if (names.size < 64) names.set(text, name);
  }
  return name;
}

async function run<T>(client: PgClient, text: string, values: unknown[]): Promise<T[]> {
  try {
    await freshPlans(client);
    return (await client.query({ name: nameOf(text), text, values: encodeArrays(values) })).rows as T[];
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
  if (qr && !qr.isReleased && deferred.get(qr) === 'unopened') return (await queryPipelined(m, [{ text, values }]))[0] as T[];
  if (!qr || qr.isReleased || !(qr.isTransactionActive || deferred.has(qr))) return m.query(text, values);
  return run<T>((await qr.connect()) as PgClient, text, values);
}

export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * Transactions whose BEGIN goes out with their first statements (inTransaction's `pipelined`), and
 * where each stands: BEGIN not sent yet, begun, or its COMMIT sent with its last statements.
 */
const deferred = new WeakMap<QueryRunner, 'unopened' | 'open' | 'committed'>();

/** For inTransaction: the transaction on qr begins with its first statement, not on its own. */
export function deferBegin(qr: QueryRunner): void {
  deferred.set(qr, 'unopened');
}

/** For inTransaction: where a deferred transaction stands (none: nothing was sent, so nothing to end). */
export function deferredState(qr: QueryRunner): 'none' | 'open' | 'committed' {
  const state = deferred.get(qr);
  return state === 'open' || state === 'committed' ? state : 'none';
}

/**
 * Hot statements sent in ONE round trip (node-postgres pipeline mode, each a named prepared
 * statement as queryPrepared's): the server runs them in order, each after the one before, and
 * nothing waits on the wire between them. Only for statements whose parameters do not depend on
 * an earlier one's rows. A deferred transaction's BEGIN goes out first; `commit` sends COMMIT
 * last. In a transaction a failed statement fails the rest (and a COMMIT behind it rolls back):
 * the first failure is thrown, as queryPrepared's would be. Rows come back per statement.
 */
export async function queryPipelined(m: EntityManager, statements: readonly Statement[], opts: { commit?: boolean } = {}): Promise<unknown[][]> {
  const qr = m.queryRunner;
  if (!qr || qr.isReleased || !(qr.isTransactionActive || deferred.has(qr))) throw new Error('queryPipelined runs inside a transaction');
  const client = (await qr.connect()) as PgClient;
  await freshPlans(client);
  const begin = deferred.get(qr) === 'unopened';
  if (deferred.has(qr)) deferred.set(qr, opts.commit ? 'committed' : 'open');
  client.pipeline = true;
  let settled: PromiseSettledResult<{ rows: unknown[]; command?: string }>[];
  try {
    // Each query writes its messages as it is called (node-postgres corks each on its own): corked
    // around the whole burst, the burst leaves in one write (one system call, one wake-up of the
    // server) instead of one per statement.
    const stream = client.connection?.stream;
    stream?.cork?.();
    let sent: Promise<{ rows: unknown[]; command?: string }>[];
    try {
      sent = [
        ...(begin ? [client.query('BEGIN')] : []),
        ...statements.map((s) => client.query({ name: nameOf(s.text), text: s.text, values: encodeArrays(s.values) })),
        ...(opts.commit ? [client.query('COMMIT')] : []),
      ];
    } finally {
      stream?.uncork?.();
    }
    settled = await Promise.allSettled(sent);
  } finally {
    client.pipeline = false;
  }
  const failed = settled.findIndex((r) => r.status === 'rejected');
  if (failed >= 0) {
    const i = failed - (begin ? 1 : 0);
    const text = statements[i]?.text ?? (i < 0 ? 'BEGIN' : 'COMMIT');
    throw new QueryFailedError(text, statements[i]?.values ?? [], (settled[failed] as PromiseRejectedResult).reason as Error);
  }
  const results = settled.map((r) => (r as PromiseFulfilledResult<{ rows: unknown[]; command?: string }>).value);
  if (opts.commit && results[results.length - 1].command !== 'COMMIT') throw new Error(`The transaction did not commit (${results[results.length - 1].command}).`);
  return results.slice(begin ? 1 : 0, begin ? 1 + statements.length : statements.length).map((r) => r.rows);
}

/**
 * The same for a hot statement that stands alone (the trade journal's INSERT, once per batch on the
 * API): prepared on whichever pool connection runs it, each preparing it once.
 */
export async function poolPrepared<T = Record<string, unknown>>(ds: DataSource, text: string, values: unknown[]): Promise<T[]> {
  const client = await (ds.driver as unknown as { master: PgPool }).master.connect();
  let failed: Error | undefined;
  try {
    return await run<T>(client, text, values);
  } catch (err) {
    failed = err as Error;
    throw err;
  } finally {
    // As pool.query does: a connection whose statement failed is closed, not put back.
    client.release(failed);
  }
}

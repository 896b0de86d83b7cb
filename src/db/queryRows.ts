import type { EntityManager } from 'typeorm';

/**
 * Typed answers of raw SQL (issue 67): TypeORM's `query` answers `any`, and for an UPDATE or DELETE
 * not the rows but `[rows, rowCount]`. These run the statement through the caller's own `query`
 * (a transaction's manager, or the data source, so replica routing and statement counting see it as
 * before) and answer the rows whatever the command, typed as the caller declares them. The type
 * tells what pg returns: int8, numeric and count(*) as strings, int4 and float8 as numbers,
 * timestamps as Date, json as parsed; a table's whole row is `Row<Entity>` read by `rowReader`.
 */
export type Queryable = Pick<EntityManager, 'query'>;

/** TypeORM's answer for an UPDATE or DELETE; any other statement answers its rows (objects, never arrays). */
function isChangePair(out: unknown): out is [unknown[], number] {
  return Array.isArray(out) && out.length === 2 && Array.isArray(out[0]) && typeof out[1] === 'number';
}

/** The rows the statement returns (a SELECT's, or an INSERT/UPDATE/DELETE ... RETURNING's). */
export async function rows<T>(q: Queryable, sql: string, params?: readonly unknown[]): Promise<T[]> {
  const out: unknown = await q.query(sql, params as unknown[] | undefined);
  return (isChangePair(out) ? out[0] : out) as T[];
}

/** The statement's first row, or undefined when it returns none. */
export async function firstRow<T>(q: Queryable, sql: string, params?: readonly unknown[]): Promise<T | undefined> {
  return (await rows<T>(q, sql, params))[0];
}

/** How many rows an UPDATE or DELETE changed (TypeORM keeps no count for other statements). */
export async function changedRows(q: Queryable, sql: string, params?: readonly unknown[]): Promise<number> {
  const out: unknown = await q.query(sql, params as unknown[] | undefined);
  if (!isChangePair(out)) throw new Error('changedRows counts the rows of an UPDATE or DELETE only');
  return out[1];
}

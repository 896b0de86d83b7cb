import { getMetadataArgsStorage, type ValueTransformer } from 'typeorm';

/**
 * Row types from one description (issue 58): an entity class (src/entities, which the schema test
 * proves the migrations produce) is the type of its table's rows, and `rowReader` turns a raw row
 * of that table (`SELECT *` or `RETURNING *`, snake_case) into it, reading column names, numeric
 * types and transformers from the entity's own decorators. Hand-written row interfaces and mappers
 * that re-state a table go; a query that returns a table's row types its answer `Row<Entity>`.
 */

/** The column fields of an entity: its relation fields (declared optional, `workspace?: Workspace`) and methods left out. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{} extends Pick<E, K>` is how an optional field is told apart
export type Row<E> = { [K in keyof E as {} extends Pick<E, K> ? never : E[K] extends (...a: never[]) => unknown ? never : K]: E[K] };

type Ctor<E> = abstract new (...args: never[]) => E;

/** Postgres types pg returns as strings or that an entity types as number: read as a JS number. */
const NUMERIC = new Set(['int', 'integer', 'int4', 'smallint', 'int2', 'double precision', 'float8', 'real', 'float4', 'numeric', 'decimal']);

interface ColumnRead {
  prop: string;
  column: string;
  read: (v: unknown) => unknown;
}

function readerOf(type: unknown, transformer: ValueTransformer | ValueTransformer[] | undefined): (v: unknown) => unknown {
  if (transformer && !Array.isArray(transformer)) return (v) => (v === null || v === undefined ? null : transformer.from(v));
  if (type === Number || (typeof type === 'string' && NUMERIC.has(type))) return (v) => (v === null || v === undefined ? null : Number(v));
  if (type === 'bigint') return (v) => (v === null || v === undefined ? null : String(v));
  return (v) => (v === undefined ? null : v);
}

const readers = new WeakMap<object, ColumnRead[]>();

function columnsOf(entity: object): ColumnRead[] {
  let cols = readers.get(entity);
  if (!cols) {
    const args = getMetadataArgsStorage().filterColumns(entity as never);
    if (!args.length) throw new Error(`rowReader: ${String((entity as { name?: string }).name)} is not an entity class`);
    cols = args.map((c) => ({ prop: c.propertyName, column: c.options.name ?? c.propertyName, read: readerOf(c.options.type, c.options.transformer) }));
    readers.set(entity, cols);
  }
  return cols;
}

/** A mapper from a raw row of the entity's table to `Row<Entity>`; columns the query did not select read as null. */
export function rowReader<E>(entity: Ctor<E>): (raw: Record<string, unknown>) => Row<E> {
  const cols = columnsOf(entity);
  return (raw) => {
    const out: Record<string, unknown> = {};
    for (const c of cols) out[c.prop] = c.read(raw[c.column]);
    return out as Row<E>;
  };
}

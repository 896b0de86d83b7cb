import { Client, Pool } from 'pg';
import { TableCheck, TableForeignKey, TableIndex, TableUnique, type DataSource, type QueryRunner } from 'typeorm';
import { ensureDatabase, makeDataSource } from '../../src/db/dataSource';
import { sqlIndexes, sqlIndexStatement } from '../../src/entities/sqlIndex';
import { loadConfig } from '../../src/config';
import { AUTH_LIBRARY_TABLES, authOptions } from '../../src/services/accounts';

/**
 * The entities are the schema's description: on a fresh database migrated from nothing, TypeORM's
 * schema builder (what `synchronize` would run) must find nothing to change. Any column, type,
 * nullability, default, primary key, unique constraint, index, foreign key or check that an entity
 * and the migrations disagree on shows up here as a pending query.
 *
 * The schema builder compares some objects by name only (check expressions, foreign key columns,
 * index predicates and key order) and does not see indexes on expressions at all, so a second test has
 * Postgres itself render every index and constraint the entities declare (created under a scratch name
 * in a transaction that is rolled back) and compares that definition with the migrated one.
 */
const base = process.env.TEST_DATABASE_BASE ?? 'postgres://postgres@127.0.0.1:5432';
const dbName = `mpps_schema_${Date.now()}_${process.pid}`;
const url = `${base}/${dbName}`;
let ds: DataSource;

beforeAll(async () => {
  await ensureDatabase(url);
  ds = makeDataSource(url, 2);
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
});

afterAll(async () => {
  await ds?.destroy();
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
});

describe('entities and migrations', () => {
  it('the migrations produce exactly the entities: the schema builder has no pending change', async () => {
    const sql = await ds.driver.createSchemaBuilder().log();
    expect(sql.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('every index and constraint is defined exactly as the entities declare it, as Postgres renders both', async () => {
    const migrated = await catalog(ds.createQueryRunner());
    const qr = ds.createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    const declared: Record<string, string> = {};
    try {
      let n = 0;
      for (const meta of ds.entityMetadatas) {
        const table = meta.tableName;
        const render = async (name: string, create: (scratch: string) => Promise<unknown>, read: (scratch: string) => Promise<string>) => {
          const scratch = `schema_test_${++n}`;
          await create(scratch);
          declared[`${table}.${name}`] = (await read(scratch)).replace(scratch, name);
        };
        const indexDef = (scratch: string) => one(qr, `SELECT pg_get_indexdef(to_regclass($1)) AS def`, [scratch]);
        const constraintDef = (scratch: string) => one(qr, `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = $1 AND conrelid = to_regclass($2)`, [scratch, table]);
        for (const index of meta.indices) {
          const sql = sqlIndexes.find((d) => d.target === meta.target && d.name === index.name);
          await render(
            index.name,
            (scratch) => (sql ? qr.query(sqlIndexStatement(sql, table, scratch)) : qr.createIndex(table, Object.assign(TableIndex.create(index), { name: scratch }))),
            indexDef,
          );
        }
        for (const unique of meta.uniques) {
          await render(unique.name, (scratch) => qr.createUniqueConstraint(table, Object.assign(TableUnique.create(unique), { name: scratch })), constraintDef);
        }
        for (const check of meta.checks) {
          await render(check.name, (scratch) => qr.createCheckConstraint(table, Object.assign(TableCheck.create(check), { name: scratch })), constraintDef);
        }
        for (const fk of meta.foreignKeys) {
          await render(fk.name, (scratch) => qr.createForeignKey(table, Object.assign(TableForeignKey.create(fk, ds.driver), { name: scratch })), constraintDef);
        }
      }
      // An entity may only declare indexes through @Index or @SqlIndex (never a stray synchronize: false).
      for (const meta of ds.entityMetadatas) {
        for (const index of meta.indices.filter((i) => !i.synchronize)) {
          expect(sqlIndexes.some((d) => d.target === meta.target && d.name === index.name)).toBe(true);
        }
      }
    } finally {
      await qr.rollbackTransaction();
      await qr.release();
    }
    expect(migrated).toEqual(declared);
  });

  it('every table the migrations create has an entity, except the account system\'s own', async () => {
    const tables: { table_name: string }[] = await ds.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'migrations' AND NOT (table_name = ANY($1)) ORDER BY table_name`,
      [AUTH_LIBRARY_TABLES],
    );
    const mapped = ds.entityMetadatas.map((m) => m.tableName).sort();
    expect(tables.map((t) => t.table_name)).toEqual(mapped);
    const present: { n: number }[] = await ds.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name = ANY($1)`, [AUTH_LIBRARY_TABLES]);
    expect(present[0].n).toBe(AUTH_LIBRARY_TABLES.length);
  });

  it('the account system (Better Auth) finds every table and column it needs: our migrations match the pinned library', async () => {
    const { getMigrations } = await import('better-auth/db/migration');
    const pool = new Pool({ connectionString: url, max: 1 });
    try {
      const plan = await getMigrations(authOptions(loadConfig({ ...process.env, NODE_ENV: 'test', DATABASE_URL: url }), pool));
      expect({ create: plan.toBeCreated.map((t) => t.table), add: plan.toBeAdded.map((t) => `${t.table}: ${Object.keys(t.fields).join(', ')}`) }).toEqual({ create: [], add: [] });
    } finally {
      await pool.end();
    }
  });
});

async function one(qr: QueryRunner, sql: string, params: unknown[]): Promise<string> {
  const rows: { def: string | null }[] = await qr.query(sql, params);
  if (rows.length !== 1 || !rows[0].def) throw new Error(`no single definition for ${JSON.stringify(params)}`);
  return rows[0].def;
}

/** Every index and every non-primary-key constraint of the public schema, by "table.name", as Postgres renders it. */
async function catalog(qr: QueryRunner): Promise<Record<string, string>> {
  try {
    const rows: { key: string; def: string }[] = await qr.query(`
      SELECT t.relname || '.' || c.relname AS key, pg_get_indexdef(i.indexrelid) AS def
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
        JOIN pg_namespace s ON s.oid = t.relnamespace
       WHERE s.nspname = 'public' AND t.relname <> 'migrations' AND NOT (t.relname = ANY($1))
         AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u'))
      UNION ALL
      SELECT t.relname || '.' || k.conname, pg_get_constraintdef(k.oid)
        FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_namespace s ON s.oid = t.relnamespace
       WHERE s.nspname = 'public' AND t.relname <> 'migrations' AND NOT (t.relname = ANY($1)) AND k.contype <> 'p'`,
      [AUTH_LIBRARY_TABLES],
    );
    return Object.fromEntries(rows.map((r) => [r.key, r.def]));
  } finally {
    await qr.release();
  }
}

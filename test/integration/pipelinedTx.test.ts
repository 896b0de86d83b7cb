import type { DataSource } from 'typeorm';
import { makeDataSource } from '../../src/db/dataSource';
import { queryPipelined, queryPrepared } from '../../src/db/prepared';
import { inTransaction } from '../../src/db/tx';
import { countRoundTrips } from '../helpers/roundTrips';

/**
 * The lane's transaction in two round trips (db/tx.ts `pipelined`, db/prepared.ts queryPipelined):
 * BEGIN goes out with the first statements and COMMIT with the last. Still one transaction: nothing
 * is seen before the COMMIT, a failure anywhere leaves nothing written and no transaction open on a
 * pooled connection, and a serialization failure behind which the COMMIT went out is retried.
 */
describe('a pipelined transaction', () => {
  let ds: DataSource;
  const table = `pipe_probe_${process.pid}`;
  // Round trips: each burst of statements written together on one connection counts once.
  let counter: ReturnType<typeof countRoundTrips>;

  beforeAll(async () => {
    // Named, so the checks below count this pool's connections only: other suites share the database.
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('application_name', table);
    ds = makeDataSource(url.toString(), 3);
    await ds.initialize();
    await ds.query(`CREATE TABLE ${table} (id text PRIMARY KEY, n int NOT NULL DEFAULT 0)`);
    await ds.query(`CREATE SEQUENCE ${table}_flaky`);
    // Fails with a serialization failure on its first call only (a sequence is not rolled back).
    await ds.query(`CREATE FUNCTION ${table}_flaky() RETURNS int LANGUAGE plpgsql AS $$
      BEGIN IF nextval('${table}_flaky') = 1 THEN RAISE EXCEPTION 'flaky' USING ERRCODE = '40001'; END IF; RETURN 1; END $$`);
    expect((await ds.query(`SELECT current_setting('application_name') AS a`))[0].a).toBe(table);
    counter = countRoundTrips();
  });
  afterAll(async () => {
    counter.restore();
    await ds.query(`DROP FUNCTION ${table}_flaky(); DROP SEQUENCE ${table}_flaky; DROP TABLE ${table}`);
    await ds.destroy();
  });

  const count = async (id: string) => Number((await ds.query(`SELECT count(*) AS n FROM ${table} WHERE id = $1`, [id]))[0].n);
  const idleInTransaction = async () =>
    Number((await ds.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND state LIKE 'idle in transaction%'`, [table]))[0].n);
  const insert = (id: string) => ({ text: `INSERT INTO ${table} (id) VALUES ($1)`, values: [id] });

  it('sends BEGIN with the first statements and COMMIT with the last: 2 round trips, nothing seen before the COMMIT', async () => {
    counter.reset();
    const seenInside = await inTransaction(ds, async (m) => {
      const [, [a]] = await queryPipelined(m, [insert('a1'), { text: `SELECT count(*)::int AS n FROM ${table} WHERE id = ANY($1::text[])`, values: [['a1']] }]);
      const outside = await count('a1');
      await queryPipelined(m, [insert('a2')], { commit: true });
      return { inside: a, outside };
    }, { pipelined: true });
    const tripsTaken = counter.trips;
    // The second connection's count was taken before the COMMIT: a statement run outside a transaction would show.
    expect(seenInside).toEqual({ inside: { n: 1 }, outside: 0 });
    expect([await count('a1'), await count('a2')]).toEqual([1, 1]);
    expect(tripsTaken).toBe(2 + 1); // the two pipelines, and the outside count
  });

  it('a burst leaves in one socket write, not one per statement', async () => {
    // Counted on the transaction's own socket: every write or writev the burst makes.
    let writes = 0;
    await inTransaction(ds, async (m) => {
      await queryPipelined(m, [insert('w0')]);
      type Write = (this: unknown, ...a: unknown[]) => unknown;
      const stream = ((await m.queryRunner!.connect()) as { connection: { stream: { _write: Write; _writev: Write } } }).connection.stream;
      const [w, wv] = [stream._write, stream._writev];
      stream._write = function (this: unknown, ...a: unknown[]) { writes++; return w.apply(this, a); };
      stream._writev = function (this: unknown, ...a: unknown[]) { writes++; return wv.apply(this, a); };
      try {
        await queryPipelined(m, [insert('w1'), insert('w2'), { text: `SELECT count(*)::int AS n FROM ${table} WHERE id LIKE 'w%'`, values: [] }], { commit: true });
      } finally {
        stream._write = w;
        stream._writev = wv;
      }
    }, { pipelined: true });
    expect(await count('w1') + (await count('w2'))).toBe(2);
    expect(writes).toBe(1); // three statements and the COMMIT: four writes uncorked
  });

  it('a failed statement in the committing round trip leaves nothing written and no transaction open', async () => {
    await ds.query(`INSERT INTO ${table} (id) VALUES ('taken')`);
    await expect(inTransaction(ds, async (m) => {
      await queryPipelined(m, [insert('b1')]);
      await queryPipelined(m, [insert('taken'), insert('b2')], { commit: true });
    }, { pipelined: true })).rejects.toThrow(/duplicate key/);
    expect([await count('b1'), await count('b2')]).toEqual([0, 0]);
    expect(await idleInTransaction()).toBe(0);
  });

  it('a failure in the opening round trip or in between rolls back, and the connection goes back clean', async () => {
    await expect(inTransaction(ds, async (m) => {
      await queryPipelined(m, [insert('c1'), { text: 'SELECT 1/0', values: [] }]);
    }, { pipelined: true })).rejects.toThrow(/division by zero/);
    await expect(inTransaction(ds, async (m) => {
      await queryPrepared(m, `INSERT INTO ${table} (id) VALUES ($1)`, ['c2']); // a lone statement also carries the BEGIN
      throw new Error('refused in between');
    }, { pipelined: true })).rejects.toThrow('refused in between');
    expect([await count('c1'), await count('c2')]).toEqual([0, 0]);
    expect(await idleInTransaction()).toBe(0);
    // Every pooled connection still runs statements in and out of transactions.
    await Promise.all([1, 2, 3].map((i) => inTransaction(ds, async (m) => queryPipelined(m, [insert(`c3-${i}`)], { commit: true }), { pipelined: true })));
    expect(await count('c3-1') + (await count('c3-2')) + (await count('c3-3'))).toBe(3);
  });

  it('a serialization failure in the committing round trip is retried, and the first attempt left nothing', async () => {
    let attempts = 0;
    await inTransaction(ds, async (m) => {
      attempts++;
      await queryPipelined(m, [insert('d1')]);
      await queryPipelined(m, [{ text: `SELECT ${table}_flaky()`, values: [] }], { commit: true });
    }, { pipelined: true });
    expect(attempts).toBe(2);
    expect(await count('d1')).toBe(1); // the first attempt's row would make the second's insert fail
  });
});

import { Pool, type PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { makeDataSource } from '../../src/db/dataSource';
import { adoptClient, dropClient, heldClient, routeQueryRunners, runnerConnecting } from '../../src/db/typeormInternals';
import { changedRows, firstRow, rows } from '../../src/db/queryRows';

// The pinned TypeORM's query-runner internals that src/db/typeormInternals.ts relies on (the replica
// router hands runners a replica's client through them). An upgrade that changes them fails here.
describe('TypeORM internals the replica router relies on', () => {
  let ds: DataSource;
  let other: Pool;
  const pid = async (r: PostgresQueryRunner) => Number((await r.query('SELECT pg_backend_pid() AS pid'))[0].pid);

  beforeAll(async () => {
    ds = makeDataSource(process.env.DATABASE_URL!, 2);
    await ds.initialize();
    other = new Pool({ connectionString: process.env.DATABASE_URL!, max: 1 });
  });
  afterAll(async () => {
    await ds.destroy();
    await other.end();
  });

  it("connect() fills the runner's client fields and release() hands the client back through its callback", async () => {
    const r = ds.createQueryRunner() as PostgresQueryRunner;
    expect(runnerConnecting(r)).toBe(false);
    expect(heldClient(r)).toBeUndefined();
    const client = await r.connect();
    expect(runnerConnecting(r)).toBe(true);
    expect(heldClient(r)).toBe(client);
    expect((ds.driver as unknown as { connectedQueryRunners: unknown[] }).connectedQueryRunners).toContain(r);
    await r.release();
    expect((ds.driver as unknown as { connectedQueryRunners: unknown[] }).connectedQueryRunners).not.toContain(r);
  });

  it('an adopted client runs the runner\'s statements until it is dropped, then TypeORM connects its own', async () => {
    const r = ds.createQueryRunner() as PostgresQueryRunner;
    const client: PoolClient = await other.connect();
    const adoptedPid = Number((await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    let released = 0;
    adoptClient(r, client, (err) => {
      released += 1;
      client.release(err instanceof Error ? err : undefined);
    });
    expect(await pid(r)).toBe(adoptedPid);
    expect(other.idleCount).toBe(0);
    dropClient(r);
    expect(released).toBe(1);
    expect(other.idleCount).toBe(1);
    expect(runnerConnecting(r)).toBe(false);
    expect(await pid(r)).not.toBe(adoptedPid);
    await r.release();
    expect(released).toBe(1);
  });

  it("routes the data source's new runners through the factory it is given", async () => {
    const seen: string[] = [];
    routeQueryRunners(ds, (plain, mode) => {
      seen.push(mode);
      return plain(mode);
    });
    const r = ds.createQueryRunner('master');
    expect(seen).toEqual(['master']);
    expect(await r.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await r.release();
  });
});

// db/queryRows reads the pinned TypeORM's answer to `query`: the rows, except for an UPDATE or a
// DELETE, which answer [rows, rowCount]. The helpers answer rows whatever the command, on a
// transaction's manager as on the data source, with the types pg gives each column.
describe('typed query answers (db/queryRows) over the pinned TypeORM', () => {
  let ds: DataSource;
  const table = `query_rows_probe_${process.pid}`;

  beforeAll(async () => {
    ds = makeDataSource(process.env.DATABASE_URL!, 2);
    await ds.initialize();
    await ds.query(`CREATE TABLE ${table} (id int4 PRIMARY KEY, big int8 NOT NULL, amount numeric NOT NULL, at timestamptz NOT NULL)`);
    await ds.query(`INSERT INTO ${table} VALUES (1, 9007199254740993, 1.5, '2026-01-01Z'), (2, 2, 2, '2026-01-02Z'), (3, 3, 3, '2026-01-03Z')`);
  });
  afterAll(async () => {
    await ds.query(`DROP TABLE IF EXISTS ${table}`);
    await ds.destroy();
  });

  it('TypeORM answers an UPDATE or DELETE as [rows, rowCount], a SELECT as its rows', async () => {
    expect(await ds.query(`UPDATE ${table} SET big = big WHERE id = 2 RETURNING id`)).toEqual([[{ id: 2 }], 1]);
    expect(await ds.query(`SELECT id FROM ${table} WHERE id = 2`)).toEqual([{ id: 2 }]);
  });

  it('rows and firstRow answer rows for every command; changedRows counts an UPDATE or DELETE and refuses anything else', async () => {
    const all = await rows<{ id: number; big: string; amount: string; at: Date }>(ds, `SELECT id, big, amount, at FROM ${table} ORDER BY id`);
    expect(all[0]).toEqual({ id: 1, big: '9007199254740993', amount: '1.5', at: new Date('2026-01-01Z') });
    expect(all).toHaveLength(3);
    await ds.transaction(async (m) => {
      expect(await rows<{ id: number }>(m, `UPDATE ${table} SET amount = amount + 1 WHERE id >= $1 RETURNING id`, [2])).toEqual([{ id: 2 }, { id: 3 }]);
      expect(await rows(m, `UPDATE ${table} SET amount = amount WHERE id = 1`)).toEqual([]);
      expect(await firstRow<{ id: number }>(m, `DELETE FROM ${table} WHERE id = 3 RETURNING id`)).toEqual({ id: 3 });
      expect(await firstRow(m, `SELECT id FROM ${table} WHERE id = 3`)).toBeUndefined();
      expect(await changedRows(m, `UPDATE ${table} SET amount = 0 WHERE id <= $1`, [2])).toBe(2);
      await expect(changedRows(m, `SELECT id FROM ${table}`)).rejects.toThrow('UPDATE or DELETE only');
    });
    expect(await changedRows(ds, `DELETE FROM ${table} WHERE id = 99`)).toBe(0);
    expect((await rows<{ amount: string }>(ds, `SELECT amount FROM ${table} ORDER BY id`)).map((r) => r.amount)).toEqual(['0', '0']);
  });
});

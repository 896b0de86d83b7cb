import { Pool, type PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { makeDataSource } from '../../src/db/dataSource';
import { adoptClient, dropClient, heldClient, routeQueryRunners, runnerConnecting } from '../../src/db/typeormInternals';

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

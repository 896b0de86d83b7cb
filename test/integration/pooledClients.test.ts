import { Client, Pool } from 'pg';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { queueConnection } from '../../jobs/hub';
import { isConnectionLoss } from '../../src/failures';
import { accountSystem } from '../../src/services/accounts';
import { useTestApp, type TestApp } from '../helpers/harness';

/**
 * Every Postgres pool of the process (TypeORM's, the queues', the account system's) hands out clients
 * that keep an error listener. pg-pool takes its own off a client it hands out, so a backend
 * terminated while a client is checked out between two statements (a migration's, a transaction's)
 * would emit 'error' with no listener and end the process: a worker restarted during a Postgres
 * failover died that way in the fault harness. Here the backend is terminated at exactly that
 * moment; the next statement must fail as a lost connection and the pool must serve again.
 */

let app: TestApp;
useTestApp((a) => (app = a), {}, { workers: false });

let admin: Client;
beforeAll(async () => {
  admin = new Client({ connectionString: process.env.DATABASE_URL });
  admin.on('error', () => undefined);
  await admin.connect();
});
afterAll(() => admin.end());

async function terminateWhileCheckedOut(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    expect(client.listenerCount('error')).toBeGreaterThan(0);
    const ended = new Promise<void>((r) => client.once('end', () => r()));
    expect((await admin.query('SELECT pg_terminate_backend($1) AS done', [pid])).rows[0].done).toBe(true);
    await ended; // the socket ended while no statement ran: without a listener, Node would have thrown here
    const next = await client.query('SELECT 1').then(
      () => 'answered',
      (err: unknown) => (isConnectionLoss(err) ? 'lost connection' : String(err)),
    );
    expect(next).toBe('lost connection');
  } finally {
    client.release(true);
  }
  expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
}

it('a plain pg pool hands out clients with no error listener (why the pools below need theirs)', async () => {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  try {
    const client = await pool.connect();
    expect(client.listenerCount('error')).toBe(0);
    client.release();
  } finally {
    await pool.end();
  }
});

it("TypeORM's pool: a client terminated between statements fails its next one; the process lives on", async () => {
  await terminateWhileCheckedOut((app.deps.ds.driver as PostgresDriver).master as Pool);
  expect(await app.deps.ds.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
});

it("the account system's pool: TypeORM's own (one pool, issue 58), so the same", async () => {
  expect(accountSystem(app.deps).pool).toBe((app.deps.ds.driver as PostgresDriver).master);
  await terminateWhileCheckedOut(accountSystem(app.deps).pool);
});

it("the queues' Postgres pool: the same", async () => {
  const conn = queueConnection(process.env.DATABASE_URL!, `bullmq_pooled_${process.pid}`);
  try {
    await terminateWhileCheckedOut(conn.pool as unknown as Pool);
  } finally {
    await conn.close();
  }
});

it("a statement ended by a terminated backend: the client leaves TypeORM's pool at release, before its socket closes (a retried 503 would meet it)", async () => {
  const pool = (app.deps.ds.driver as PostgresDriver).master as Pool;
  const client = await pool.connect();
  let released = false;
  try {
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const sleeping = client.query('SELECT pg_sleep(30)').then(
      () => 'answered',
      (err: unknown) => (isConnectionLoss(err) ? 'lost connection' : String(err)),
    );
    await waitForActive(pid);
    expect((await admin.query('SELECT pg_terminate_backend($1) AS done', [pid])).rows[0].done).toBe(true);
    expect(await sleeping).toBe('lost connection');
    // Released at once, as a request's finally does, with no error: the pool must not keep it idle.
    const idle = pool.idleCount;
    client.release();
    released = true;
    expect(pool.idleCount).toBe(idle);
  } finally {
    if (!released) client.release(true);
  }
  expect(await app.deps.ds.query('SELECT 3 AS three')).toEqual([{ three: 3 }]);
});

async function waitForActive(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await admin.query<{ state: string }>('SELECT state FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (r.rows[0]?.state === 'active') return;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`backend ${pid} never ran its statement`);
}

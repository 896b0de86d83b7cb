import { PostgresQueueBackend, type PostgresConnection } from 'bullmq';
import { Client } from 'pg';
import { isListeningForJobs, jobsChannel, listenClientOf, relistenWhenInvalidated } from '../../jobs/bullmqInternals';
import { queueConnection } from '../../jobs/hub';

// The pinned BullMQ's Postgres-backend internals that jobs/bullmqInternals.ts relies on: a backend
// sharing the hub's connection LISTENs again, and its parked wait ends, after the LISTEN client is
// rebuilt. An upgrade that renames the private fields fails here.
describe("BullMQ's Postgres backend internals the hub relies on", () => {
  const url = process.env.DATABASE_URL!;
  const schema = `bullmq_internals_${process.pid}`;
  let conn: PostgresConnection;
  let admin: Client;
  let backend: PostgresQueueBackend;
  const settled = async <T>(p: Promise<T>, ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([p, new Promise<'still waiting'>((r) => (timer = setTimeout(() => r('still waiting'), ms)))]);
    } finally {
      clearTimeout(timer);
    }
  };

  beforeAll(async () => {
    conn = queueConnection(url, schema);
    admin = new Client({ connectionString: url });
    await admin.connect();
    backend = new PostgresQueueBackend(conn, 'internals', {} as never, false);
    relistenWhenInvalidated(conn, backend);
    await backend.waitUntilReady();
  });
  afterAll(async () => {
    await backend.close();
    await conn.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  it('hands out one prepared LISTEN client (no listener limit) until it is rebuilt', async () => {
    const a = await listenClientOf(conn);
    expect(a.getMaxListeners()).toBe(0);
    expect(await listenClientOf(conn)).toBe(a);
  });

  it('a parked wait ends and the backend LISTENs again on the rebuilt client', async () => {
    expect(isListeningForJobs(backend)).toBe(false);
    const parked = backend.waitForJob(60);
    const client = await listenClientOf(conn);
    while (!isListeningForJobs(backend)) await new Promise((r) => setTimeout(r, 10));
    const pid = ((await client.query('SELECT pg_backend_pid() AS pid')) as { rows: Array<{ pid: number }> }).rows[0].pid;
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    // Woken by relistenWhenInvalidated (cancelWait), not by its 60 s timer.
    expect(await settled(parked, 20_000)).toBeNull();
    expect(isListeningForJobs(backend)).toBe(false);
    const again = backend.waitForJob(60);
    const fresh = await listenClientOf(conn);
    expect(fresh).not.toBe(client);
    while (!isListeningForJobs(backend)) await new Promise((r) => setTimeout(r, 10));
    // BullMQ's jobs channel: a notice for this queue on the fresh client wakes the new wait.
    await admin.query('SELECT pg_notify($1, $2)', [jobsChannel(), 'internals']);
    expect(await settled(again, 20_000)).toEqual({ member: 'internals', score: 0 });
  });
});

import { Client } from 'pg';
import { readRouter, type ReadRouter } from '../../src/db/replicas';
import { registerAgent, type TestAgent } from '../helpers/factories';
import { expectLedgerSound, startTestApp, type TestApp } from '../helpers/harness';
import { PgPair } from '../helpers/pgReplica';
import { waitFor } from '../helpers/services';

/**
 * Reads on a real streaming replica (issue 60): a private primary and a `pg_basebackup -R` replica
 * of it, two API processes on them. Every answer is checked against what the caller was told.
 */
let pair: PgPair;
let a: TestApp;
let b: TestApp;
let routerA: ReadRouter;
let routerB: ReadRouter;
let agent: TestAgent;
let replicaStats: Client;
const DB = 'mpps_replicas';

beforeAll(async () => {
  pair = await PgPair.start();
  const env = {
    DATABASE_URL: pair.url(DB, 'primary'),
    DATABASE_REPLICA_URL: pair.url(DB, 'replica'),
    DATABASE_REPLICA_MAX_LAG_MS: '300',
    DATABASE_REPLICA_POLL_MS: '50',
  };
  a = await startTestApp(env, { migrate: true, workers: false });
  b = await startTestApp(env, { migrate: true, workers: false });
  routerA = readRouter(a.deps.ds)!;
  routerB = readRouter(b.deps.ds)!;
  agent = await registerAgent(a);
  replicaStats = new Client({ connectionString: pair.url('postgres', 'replica') });
  await replicaStats.connect();
}, 180_000);

afterAll(async () => {
  await replicaStats?.end().catch(() => undefined);
  if (a) await expectLedgerSound(a.deps);
  await b?.close();
  await a?.close();
  await pair?.stop();
}, 60_000);

/** Rows the replica's backends read in the app's database (the lag probes read no table). */
async function replicaRowsRead(): Promise<number> {
  const { rows } = await replicaStats.query<{ n: string }>('SELECT (tup_returned + tup_fetched)::text AS n FROM pg_stat_database WHERE datname = $1', [DB]);
  return Number(rows[0]?.n ?? 0);
}

/** Mint a key through one process, then list the caller's keys through another (or the same): the new key is there. */
async function writeThenRead(writer: TestApp, reader: TestApp, label: string): Promise<void> {
  const made = await writer.http.post(`/api/agents/${agent.id}/keys`).set('X-Agent-Key', agent.key).send({ label });
  expect(made.status).toBe(201);
  const list = await reader.http.get(`/api/agents/${agent.id}/keys`).set('X-Agent-Key', agent.key);
  expect(list.status).toBe(200);
  expect((list.body as { label: string }[]).map((k) => k.label)).toContain(label);
}

const served = (r: ReadRouter) => r.replicas[0].served;

describe('reads on a streaming replica', () => {
  it('GET routes read the replica once it has replayed what the primary acknowledged; its pg_stat_database counts the reads', async () => {
    await waitFor('replica in use', async () => routerA.replicas[0].inUse && routerB.replicas[0].inUse);
    const before = served(routerA);
    const rowsBefore = await replicaRowsRead();
    for (let i = 0; i < 5; i++) {
      const list = await a.http.get(`/api/agents/${agent.id}/keys`).set('X-Agent-Key', agent.key);
      expect(list.status).toBe(200);
    }
    expect(served(routerA)).toBeGreaterThan(before);
    // A page reads the replica too, its caller resolved on the primary.
    const beforePage = served(routerA);
    const page = await a.http.get(`/participants/${agent.id}`).set('X-Agent-Key', agent.key);
    expect(page.status).toBe(200);
    expect(page.text).toContain(agent.nickname);
    expect(served(routerA)).toBeGreaterThan(beforePage);
    // A backend reports its counts when a transaction ends a second after its last report (or when idle
    // for a while): each round reads again, so the count arrives without waiting on an idle timer.
    await waitFor(
      'the replica to count the reads',
      async () => {
        await a.http.get(`/api/agents/${agent.id}/keys`).set('X-Agent-Key', agent.key);
        return (await replicaRowsRead()) > rowsBefore;
      },
      30_000,
      200,
    );
  });

  it('a write followed at once by a read from the same caller shows the write, through the same process or another', async () => {
    for (let i = 0; i < 10; i++) {
      await writeThenRead(a, a, `same-${i}`);
      await writeThenRead(a, b, `other-${i}`);
      await writeThenRead(b, a, `back-${i}`);
    }
  });

  it('with replay paused every answer is still current, the replica is left out, and on resume it is used again', async () => {
    await replicaStats.query('SELECT pg_wal_replay_pause()');
    try {
      const servedBefore = served(routerA) + served(routerB);
      const primaryBefore = routerA.primaryReads + routerB.primaryReads;
      for (let i = 0; i < 3; i++) {
        await writeThenRead(a, a, `paused-a-${i}`);
        await writeThenRead(a, b, `paused-b-${i}`);
      }
      // The replica had not replayed those writes: none of the reads went to it.
      expect(served(routerA) + served(routerB)).toBe(servedBefore);
      expect(routerA.primaryReads + routerB.primaryReads).toBeGreaterThan(primaryBefore);
      await waitFor('the replica left out', async () => !routerA.replicas[0].inUse && !routerB.replicas[0].inUse);
      await writeThenRead(b, a, 'paused-out');
      expect(served(routerA) + served(routerB)).toBe(servedBefore);
    } finally {
      await replicaStats.query('SELECT pg_wal_replay_resume()');
    }
    await waitFor('the replica in use again', async () => routerA.replicas[0].inUse && routerB.replicas[0].inUse);
    const resumed = served(routerA);
    const list = await a.http.get(`/api/agents/${agent.id}/keys`).set('X-Agent-Key', agent.key);
    expect((list.body as { label: string }[]).map((k) => k.label)).toEqual(expect.arrayContaining(['paused-a-2', 'paused-b-2', 'paused-out']));
    expect(served(routerA)).toBeGreaterThan(resumed);
  });

  it('killing the replica changes nothing a caller sees', async () => {
    await replicaStats.end();
    await pair.killReplica();
    for (let i = 0; i < 5; i++) {
      await writeThenRead(a, b, `killed-${i}`);
      await writeThenRead(b, a, `killed-back-${i}`);
      const page = await a.http.get(`/participants/${agent.id}`);
      expect(page.status).toBe(200);
    }
    await waitFor('the dead replica left out', async () => !routerA.replicas[0].inUse && !routerB.replicas[0].inUse);
    await writeThenRead(a, b, 'killed-out');
    // Back up, it catches up and is used again.
    await pair.startReplica();
    await waitFor('the restarted replica in use', async () => routerA.replicas[0].inUse && routerB.replicas[0].inUse);
    const before = served(routerB);
    await writeThenRead(a, b, 'restarted');
    await waitFor('a read on the restarted replica', async () => {
      const list = await b.http.get(`/api/agents/${agent.id}/keys`).set('X-Agent-Key', agent.key);
      expect(list.status).toBe(200);
      return served(routerB) > before;
    });
    replicaStats = new Client({ connectionString: pair.url('postgres', 'replica') });
    await replicaStats.connect();
  });
});

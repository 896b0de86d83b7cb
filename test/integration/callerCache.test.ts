import { Client, type Notification } from 'pg';
import { AUTH_CHANNEL, callerCache, CallerCache } from '../../src/services/access';
import { PgNotices } from '../../src/db/notices';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { buildWorkspace, registerAgent } from '../helpers/factories';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;
useTestApp((a) => (app = a));

// Suites share the database, so other suites' changes notify too: each test makes its changes on
// its own connection and waits for that backend's notification (by process id).
let sql: Client;
let sqlPid: number;
beforeAll(async () => {
  sql = new Client({ connectionString: app.deps.config.databaseUrl });
  await sql.connect();
  sqlPid = (await sql.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
});
afterAll(async () => {
  await sql.end();
});

const me = (key: string) => app.http.get('/api/agents/me').set('X-Agent-Key', key);

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

/** Until the cache's LISTEN connection is up, nothing is served from memory. */
async function serving(): Promise<void> {
  await me((await registerAgent(app)).key); // opens it
  await until(() => callerCache(app.deps).serving);
}

describe('caller cache (issue 17)', () => {
  it('serves a lookup from memory until a change is notified', async () => {
    const notices = new PgNotices(app.deps.config.databaseUrl);
    const cache = new CallerCache(notices, 60_000);
    try {
      let loads = 0;
      const load = async () => ++loads;
      await cache.get('x', load);
      await until(() => cache.serving);
      // Other suites' changes notify too and may drop the entry at any time, but a notification is
      // handled only on a turn of the event loop: these lookups resolve in microtasks (load does no
      // I/O), so nothing is dropped between them and the second is served from memory.
      const before = loads;
      await cache.get('x', load);
      expect(cache.size).toBe(1);
      await cache.get('x', load);
      expect(loads).toBe(before + 1);
      const heard = cache.nextNotification({ pid: sqlPid });
      await sql.query(`UPDATE workspaces SET name = name WHERE false`); // a statement-level trigger fires on zero rows too
      await heard;
      // Dropped: the next lookup loads again.
      expect(cache.size).toBe(0);
      await cache.get('x', load);
      expect(loads).toBe(before + 2);
    } finally {
      await cache.close();
      await notices.close();
    }
  });

  it('a key revoked through the API is refused by the very next request', async () => {
    await serving();
    const a = await registerAgent(app);
    const minted = await app.http.post('/api/agents/me/keys').set('X-Agent-Key', a.key).send({ label: 'second' });
    expect((await me(minted.body.apiKey)).status).toBe(200);
    expect((await me(minted.body.apiKey)).status).toBe(200);
    expect((await app.http.delete(`/api/agents/me/keys/${minted.body.keyId}`).set('X-Agent-Key', a.key)).status).toBe(204);
    const after = await me(minted.body.apiKey);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_credentials');
  });

  it('a key revoked by another process (raw SQL here) is refused once its notification arrives', async () => {
    await serving();
    const a = await registerAgent(app);
    expect((await me(a.key)).status).toBe(200);
    expect((await me(a.key)).status).toBe(200);
    const heard = callerCache(app.deps).nextNotification({ pid: sqlPid });
    await sql.query(`UPDATE api_keys SET revoked_at = now() WHERE agent_id = $1`, [a.id]);
    await heard;
    expect((await me(a.key)).status).toBe(401);
  });

  it('a trader removed from its groups elsewhere can no longer trade; the ledger stays sound', async () => {
    await serving();
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws);
    const [mk] = await marketsOf(app, ws, metric.id);
    const t = await trader(app, ws, 100);
    expect((await trade(app, ws, t, { marketId: mk.id, direction: 'higher', amount: 1 })).status).toBe(200);
    expect((await trade(app, ws, t, { marketId: mk.id, direction: 'higher', amount: 1 })).status).toBe(200);
    const heard = callerCache(app.deps).nextNotification({ table: 'memberships', pid: sqlPid });
    await sql.query(`DELETE FROM group_members WHERE agent_id = $1`, [t.id]);
    await sql.query(`DELETE FROM memberships WHERE agent_id = $1`, [t.id]);
    await heard;
    const refused = await trade(app, ws, t, { marketId: mk.id, direction: 'higher', amount: 1 });
    expect(refused.status).toBe(403);
    await expectLedgerSound(app.deps);
  });

  it("a key's last-use bump notifies nothing; its other changes do", async () => {
    const a = await registerAgent(app);
    const listener = new Client({ connectionString: app.deps.config.databaseUrl });
    await listener.connect();
    try {
      const mine: string[] = [];
      listener.on('notification', (n: Notification) => {
        if (n.processId === sqlPid) mine.push(n.payload ?? '');
      });
      await listener.query(`LISTEN ${AUTH_CHANNEL}`);
      await sql.query(`UPDATE api_keys SET last_used_at = now() WHERE agent_id = $1`, [a.id]);
      await sql.query(`UPDATE api_keys SET label = 'relabelled' WHERE agent_id = $1`, [a.id]);
      // One connection delivers in commit order: once this marker is heard, every earlier one was.
      await sql.query(`UPDATE memberships SET joined_at = joined_at WHERE false`);
      await until(() => mine.includes('memberships'));
      expect(mine).toEqual(['api_keys', 'memberships']);
    } finally {
      await listener.end();
    }
  });
});

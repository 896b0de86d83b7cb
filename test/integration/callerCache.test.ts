import { callerCache } from '../../src/services/access';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { buildWorkspace, registerAgent } from '../helpers/factories';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;
useTestApp((a) => (app = a));

const me = (key: string) => app.http.get('/api/agents/me').set('X-Agent-Key', key);

/** Until the cache's LISTEN connection is up, nothing is served from memory. */
async function serving(): Promise<void> {
  const cache = callerCache(app.deps);
  await me((await registerAgent(app)).key); // opens it
  for (let i = 0; i < 200 && !cache.serving; i++) await new Promise((r) => setTimeout(r, 10));
  expect(cache.serving).toBe(true);
}

describe('caller cache (issue 17)', () => {
  it('serves a known key from memory, and a key revoked through the API is refused by the next request', async () => {
    await serving();
    const a = await registerAgent(app);
    const minted = await app.http.post('/api/agents/me/keys').set('X-Agent-Key', a.key).send({ label: 'second' });
    expect((await me(minted.body.apiKey)).status).toBe(200);
    expect((await me(minted.body.apiKey)).status).toBe(200);
    expect(callerCache(app.deps).size).toBeGreaterThan(0);
    expect((await app.http.delete(`/api/agents/me/keys/${minted.body.keyId}`).set('X-Agent-Key', a.key)).status).toBe(204);
    const after = await me(minted.body.apiKey);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_credentials');
  });

  it('a key revoked by another process (raw SQL here) is refused once its notification arrives', async () => {
    await serving();
    const a = await registerAgent(app);
    expect((await me(a.key)).status).toBe(200);
    expect((await me(a.key)).status).toBe(200); // from memory now
    const heard = callerCache(app.deps).nextNotification();
    await app.deps.ds.query(`UPDATE api_keys SET revoked_at = now() WHERE agent_id = $1`, [a.id]);
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
    const heard = callerCache(app.deps).nextNotification();
    await app.deps.ds.query(`DELETE FROM group_members WHERE agent_id = $1`, [t.id]);
    await app.deps.ds.query(`DELETE FROM memberships WHERE agent_id = $1`, [t.id]);
    await heard;
    const refused = await trade(app, ws, t, { marketId: mk.id, direction: 'higher', amount: 1 });
    expect(refused.status).toBe(403);
    await expectLedgerSound(app.deps);
  });

  it('a key\'s last-use bump notifies nothing; other key changes do', async () => {
    await serving();
    const a = await registerAgent(app);
    await me(a.key);
    const cache = callerCache(app.deps);
    const n0 = cache.notifications;
    await app.deps.ds.query(`UPDATE api_keys SET last_used_at = now() WHERE agent_id = $1`, [a.id]);
    await app.deps.ds.query(`UPDATE api_keys SET label = 'relabelled' WHERE agent_id = $1`, [a.id]);
    // One connection delivers in commit order: once this marker (another table) is heard, every earlier one was.
    const marker = cache.nextNotification('memberships');
    await app.deps.ds.query(`DELETE FROM memberships WHERE agent_id = $1`, [a.id]);
    await marker;
    expect(cache.notifications - n0).toBe(2);
  });
});

import { expectLedgerSound, useTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { buildWorkspace, mint, registerAgent } from '../helpers/factories';
import { ensurePlatform, hashKey, mintKey, newKeyValue, PLATFORM_AGENT_ID } from '../../src/services/identity';

let app: TestApp;
useTestApp((a) => (app = a));

describe('registration', () => {
  it('accepts the condensed shape and returns a key once, with 0 credits and scopes *', async () => {
    const name = uniqueName('cond');
    const res = await app.http.post('/api/agents/register').send({ name, operator: 'human@example.com' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ nickname: name, scopes: ['*'], balance: 0 });
    expect(res.body.apiKey).toMatch(/^mpk_/);
    const me = await app.http.get('/api/agents/me').set('X-Agent-Key', res.body.apiKey);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: res.body.agentId, name, operator: 'human@example.com', balance: 0 });
    const stored = await app.deps.ds.query(`SELECT hash FROM api_keys WHERE agent_id = $1`, [res.body.agentId]);
    expect(stored[0].hash).not.toContain(res.body.apiKey);
    expect(stored[0].hash).toHaveLength(64);
  });

  it('accepts the catalog shape with a client-chosen agentId, bio and source', async () => {
    const agentId = uniqueName('cat');
    const res = await app.http.post('/api/agents/register').send({ agentId, nickname: `n${agentId}`.slice(0, 30), bio: 'I trade', source: 'my-src' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ agentId, bio: 'I trade' });
  });

  it.each([
    ['too short', 'ab'],
    ['too long', 'a'.repeat(31)],
    ['bad char', 'bad name'],
    ['starts with dash', '-abc'],
    ['unicode', 'héllo'],
  ])('refuses a nickname that is %s', async (_label, name) => {
    const res = await app.http.post('/api/agents/register').send({ name });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.error).toMatch(/name/);
  });

  it('treats nicknames as unique case-insensitively', async () => {
    const name = uniqueName('Dup');
    expect((await app.http.post('/api/agents/register').send({ name })).status).toBe(201);
    const again = await app.http.post('/api/agents/register').send({ name: name.toUpperCase() });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('nickname_taken');
  });
});

describe('credentials', () => {
  it('401 authentication_required without a key, 401 invalid_credentials with a bad one', async () => {
    const none = await app.http.get('/api/agents/me');
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('authentication_required');
    const bad = await app.http.get('/api/agents/me').set('X-Agent-Key', 'mpk_nope');
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ code: 'invalid_credentials', doc_url: expect.stringContaining('#error-invalid_credentials') });
  });

  it('the master key resolves to the platform identity', async () => {
    const me = await app.http.get('/api/agents/me').set('X-API-Key', app.masterKey);
    expect(me.status).toBe(200);
    expect(me.body.id).toBe('platform');
  });

  it('self/admin: a participant sees itself, not a stranger; the master key sees anyone', async () => {
    const a = await registerAgent(app);
    const b = await registerAgent(app);
    expect((await app.http.get(`/api/agents/${a.id}/balance`).set('X-Agent-Key', a.key)).status).toBe(200);
    const other = await app.http.get(`/api/agents/${a.id}`).set('X-Agent-Key', b.key);
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('not_authorized');
    expect((await app.http.get(`/api/agents/${a.id}`).set('X-API-Key', app.masterKey)).status).toBe(200);
  });
});

describe('credits', () => {
  it('the master key mints; a manager moves its own credits to a member; a shortfall is 409', async () => {
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 50 });
    const member = await registerAgent(app);
    await app.http.post(`/api/marketplace/${ws.id}/join`).set('X-Agent-Key', member.key).expect(200);
    const moved = await app.http.post(`/api/agents/${member.id}/credit`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ amount: 20.5 });
    expect(moved.status).toBe(200);
    expect(moved.body.balance).toBe(20.5);
    const owner = await app.http.get('/api/agents/me/balance').set('X-Agent-Key', ws.owner.key);
    expect(owner.body.balance).toBe(29.5);
    const short = await app.http.post(`/api/agents/${member.id}/credit`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ amount: 30 });
    expect(short.status).toBe(409);
    expect(short.body).toMatchObject({ code: 'insufficient_balance', balance: 29.5, cost: 30 });
    const notManager = await app.http.post(`/api/agents/${ws.owner.id}/credit`).set('X-Agent-Key', member.key).set('X-Workspace-Id', ws.id).send({ amount: 1 });
    expect(notManager.status).toBe(403);
    expect(notManager.body).toMatchObject({ code: 'not_authorized', requiredCapabilities: ['manage'] });
    await expectLedgerSound(app.deps);
  });

  it('minting keeps the ledger invariant: issuance goes negative by exactly what was issued', async () => {
    const a = await registerAgent(app);
    await mint(app, a.id, 0.000000001);
    // Other suites mint at the same time: read this mint's own transfer, not the shared balance.
    const legs = await app.deps.ds.query(
      `SELECT e.account_id, e.amount FROM ledger_entries e
        WHERE e.transfer_id = (SELECT transfer_id FROM ledger_entries WHERE account_id = $1 AND kind = 'mint' ORDER BY id DESC LIMIT 1)
        ORDER BY e.amount`,
      [`agent:${a.id}`],
    );
    expect(legs.map((l: { account_id: string; amount: string }) => [l.account_id, BigInt(l.amount)])).toEqual([
      ['issuance', -1n],
      [`agent:${a.id}`, 1n],
    ]);
  });
});

describe('the generated master key', () => {
  it("a start that finds the key it generated already stored (its commit landed, the answer was lost) prints that key; another process's start prints none", async () => {
    const mine = newKeyValue();
    // What the lost attempt committed: the key this process generated, stored as the master.
    await app.deps.ds.transaction((m) => mintKey(m, PLATFORM_AGENT_ID, { scopes: ['*'], label: 'master (generated)', isMaster: true, value: mine }));
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await ensurePlatform(app.deps.ds, undefined, mine)).toEqual({ printedKey: mine });
      expect(stdout.mock.calls.map((c) => String(c[0])).join('')).toContain(`MASTER_API_KEY=${mine}\n`);
      stdout.mockClear();
      expect(await ensurePlatform(app.deps.ds, undefined, newKeyValue())).toEqual({});
      expect(stdout.mock.calls.map((c) => String(c[0])).join('')).not.toContain('MASTER_API_KEY=');
    } finally {
      stdout.mockRestore();
      await app.deps.ds.query(`UPDATE api_keys SET revoked_at = now() WHERE hash = $1`, [hashKey(mine)]);
    }
  });
});

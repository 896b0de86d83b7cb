import { useTestApp, type TestApp } from '../helpers/harness';
import { buildWorkspace, registerAgent, type TestAgent } from '../helpers/factories';
import { deleteAndWait } from '../helpers/deletions';

let app: TestApp;
useTestApp((a) => (app = a));

const keysOf = (key: string, id = 'me') => app.http.get(`/api/agents/${id}/keys`).set('X-Agent-Key', key);
const mint = (key: string, body: Record<string, unknown>, id = 'me') => app.http.post(`/api/agents/${id}/keys`).set('X-Agent-Key', key).send(body);
const patch = (key: string, keyId: string, body: Record<string, unknown>, id = 'me') => app.http.patch(`/api/agents/${id}/keys/${keyId}`).set('X-Agent-Key', key).send(body);
const revoke = (key: string, keyId: string, id = 'me') => app.http.delete(`/api/agents/${id}/keys/${keyId}`).set('X-Agent-Key', key);

async function keyIdOf(agent: TestAgent): Promise<string> {
  const res = await keysOf(agent.key);
  return res.body[0].keyId;
}

async function until(check: () => Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('key records', () => {
  it('lists rows without the key value; mint returns the value once', async () => {
    const a = await registerAgent(app);
    const ws = await buildWorkspace(app, { owner: a });
    const minted = await mint(a.key, { label: 'ci bot', scopes: ['workspace:read'], workspaceId: ws.slug, workspaceLocked: true });
    expect(minted.status).toBe(201);
    expect(minted.body).toEqual({
      keyId: expect.stringMatching(/^key_/),
      apiKey: expect.stringMatching(/^mpk_/),
      label: 'ci bot',
      scopes: ['workspace:read'],
      workspaceId: ws.id,
      workspaceLocked: true,
      createdAt: expect.any(String),
    });
    const list = await keysOf(a.key);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    const row = list.body.find((k: { keyId: string }) => k.keyId === minted.body.keyId);
    expect(Object.keys(row).sort()).toEqual(['createdAt', 'hashPrefix', 'keyId', 'label', 'lastUsedAt', 'scopes', 'workspaceId', 'workspaceLocked']);
    expect(row).toMatchObject({ label: 'ci bot', scopes: ['workspace:read'], workspaceId: ws.id, workspaceLocked: true, lastUsedAt: null, hashPrefix: expect.stringMatching(/^[0-9a-f]{8}$/) });
    expect(JSON.stringify(list.body)).not.toContain(minted.body.apiKey);
    // The new key works and is what it says.
    const me = await app.http.get('/api/workspaces/current').set('X-Agent-Key', minted.body.apiKey);
    expect(me.status).toBe(200);
    expect(me.body.capabilities).toEqual(['read']);
  });

  it('scopes default to the caller key’s own', async () => {
    const a = await registerAgent(app);
    const first = await mint(a.key, { scopes: ['workspace:trade', 'account:keys'] });
    const second = await mint(first.body.apiKey, { label: 'derived' });
    expect(second.status).toBe(201);
    expect(second.body.scopes).toEqual(['workspace:trade', 'account:keys']);
    const full = await mint(a.key, {});
    expect(full.body.scopes).toEqual(['*']);
  });

  it('PATCH edits label, scopes and the lock; omitted fields are kept', async () => {
    const a = await registerAgent(app);
    const ws = await buildWorkspace(app, { owner: a });
    const k = await mint(a.key, { label: 'one', scopes: ['workspace:read'], workspaceId: ws.id });
    const r1 = await patch(a.key, k.body.keyId, { label: 'two' });
    expect(r1.status).toBe(200);
    expect(r1.body).toEqual({ ok: true, keyId: k.body.keyId, label: 'two' });
    const r2 = await patch(a.key, k.body.keyId, { scopes: ['workspace:trade', 'account:read'], workspaceLocked: true });
    expect(r2.body).toEqual({ ok: true, keyId: k.body.keyId, scopes: ['workspace:trade', 'account:read'], workspaceLocked: true });
    const row = (await keysOf(a.key)).body.find((x: { keyId: string }) => x.keyId === k.body.keyId);
    expect(row).toMatchObject({ label: 'two', scopes: ['workspace:trade', 'account:read'], workspaceLocked: true, workspaceId: ws.id });
    const r3 = await patch(a.key, k.body.keyId, { label: 'three' });
    expect(r3.status).toBe(200);
    expect((await keysOf(a.key)).body.find((x: { keyId: string }) => x.keyId === k.body.keyId).workspaceLocked).toBe(true);
  });

  it('DELETE revokes (204); the key then gets 401; the key of the request cannot revoke itself', async () => {
    const a = await registerAgent(app);
    const k = await mint(a.key, { label: 'doomed' });
    expect((await app.http.get('/api/agents/me').set('X-Agent-Key', k.body.apiKey)).status).toBe(200);
    const self = await revoke(k.body.apiKey, k.body.keyId);
    expect(self.status).toBe(409);
    expect(self.body.code).toBe('conflict');
    const del = await revoke(a.key, k.body.keyId);
    expect(del.status).toBe(204);
    const after = await app.http.get('/api/agents/me').set('X-Agent-Key', k.body.apiKey);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_credentials');
    expect((await keysOf(a.key)).body.map((x: { keyId: string }) => x.keyId)).not.toContain(k.body.keyId);
    expect((await revoke(a.key, k.body.keyId)).status).toBe(404);
  });

  it('self/owner: another participant, even a workspace admin, cannot see or touch the keys; the master key can', async () => {
    const ws = await buildWorkspace(app);
    const member = await registerAgent(app);
    await app.http.post(`/api/marketplace/${ws.id}/join`).set('X-Agent-Key', member.key);
    const other = await keysOf(ws.owner.key, member.id).set('X-Workspace-Id', ws.id);
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('not_authorized');
    expect((await mint(ws.owner.key, {}, member.id)).status).toBe(403);
    expect((await revoke(ws.owner.key, await keyIdOf(member), member.id)).status).toBe(403);
    const master = await app.http.get(`/api/agents/${member.id}/keys`).set('X-API-Key', app.masterKey);
    expect(master.status).toBe(200);
    expect(master.body).toHaveLength(1);
    expect((await keysOf(ws.owner.key, 'nobody-at-all')).status).toBe(404);
  });

  it.each([
    ['an unknown scope', { scopes: ['workspace:admin'] }],
    ['no scopes', { scopes: [] }],
    ['a lock without a workspace', { workspaceLocked: true }],
    ['an unknown field', { owner: 'x' }],
    ['a label over 100 characters', { label: 'x'.repeat(101) }],
    ['a NUL byte in the label', { label: 'a\u0000b' }],
  ])('refuses %s with 400', async (_label, body) => {
    const a = await registerAgent(app);
    const res = await mint(a.key, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', error: expect.any(String) });
  });

  it('an unknown workspace is 404', async () => {
    const a = await registerAgent(app);
    const res = await mint(a.key, { workspaceId: 'no-such-space' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('workspace_not_found');
  });
});

describe('scope escalation', () => {
  let a: TestAgent;
  let narrow: { apiKey: string; keyId: string };
  let spare: string;
  beforeAll(async () => {
    a = await registerAgent(app);
    narrow = (await mint(a.key, { scopes: ['workspace:trade', 'account:keys'] })).body;
    spare = (await mint(a.key, { scopes: ['workspace:read'] })).body.keyId;
  });

  it.each([
    ['*', ['*']],
    ['workspace:manage', ['workspace:manage']],
    ['an account scope it lacks', ['account:wallet']],
    ['a mix with one broader scope', ['workspace:read', 'account:agents']],
  ])('a narrow key cannot mint %s', async (_label, scopes) => {
    const res = await mint(narrow.apiKey, { scopes });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('scope_denied');
    expect(res.body.requiredScopes.length).toBeGreaterThan(0);
  });

  it('a narrow key can mint within its own scopes', async () => {
    const res = await mint(narrow.apiKey, { scopes: ['workspace:read'] });
    expect(res.status).toBe(201);
  });

  it('a narrow key cannot widen another key through PATCH', async () => {
    const res = await patch(narrow.apiKey, spare, { scopes: ['*'] });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'scope_denied', requiredScopes: ['*'] });
    const row = (await keysOf(a.key)).body.find((x: { keyId: string }) => x.keyId === spare);
    expect(row.scopes).toEqual(['workspace:read']);
  });

  it('a key without account:keys cannot manage keys at all', async () => {
    const k = await mint(a.key, { scopes: ['workspace:manage'] });
    const res = await keysOf(k.body.apiKey);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'scope_denied', requiredScopes: ['account:keys'] });
  });
});

describe('workspace-locked keys', () => {
  it('a locked key refuses other workspaces and cannot remove restrictions', async () => {
    const a = await registerAgent(app);
    const ws = await buildWorkspace(app, { owner: a });
    const ws2 = await buildWorkspace(app, { owner: a });
    const locked = (await mint(a.key, { workspaceId: ws.id, workspaceLocked: true, label: 'locked' })).body;
    const there = await app.http.get('/api/groups').set('X-Agent-Key', locked.apiKey).set('X-Workspace-Id', ws2.slug);
    expect(there.status).toBe(403);
    expect(there.body.code).toBe('workspace_locked');
    expect((await app.http.get('/api/groups').set('X-Agent-Key', locked.apiKey).set('X-Workspace-Id', ws.id)).status).toBe(200);
    // A workspace named in the path counts too.
    const pathOther = await app.http.get(`/api/workspaces/${ws2.id}/view-link`).set('X-Agent-Key', locked.apiKey);
    expect(pathOther.status).toBe(403);
    expect(pathOther.body.code).toBe('workspace_locked');
    // Unlocking: itself or a sibling.
    const sibling = (await mint(a.key, { workspaceId: ws.id, workspaceLocked: true })).body;
    for (const keyId of [locked.keyId, sibling.keyId]) {
      const res = await patch(locked.apiKey, keyId, { workspaceLocked: false });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('workspace_locked');
    }
    // Minting: never an unlocked key, never another workspace; by default locked to its own.
    expect((await mint(locked.apiKey, { workspaceLocked: false })).status).toBe(403);
    expect((await mint(locked.apiKey, { workspaceId: ws2.id })).status).toBe(403);
    const child = await mint(locked.apiKey, { label: 'from locked' });
    expect(child.status).toBe(201);
    expect(child.body).toMatchObject({ workspaceId: ws.id, workspaceLocked: true });
    // An unlocked key of the same participant may unlock.
    expect((await patch(a.key, sibling.keyId, { workspaceLocked: false })).status).toBe(200);
  });

  it('a key locked to a deleted workspace is locked to nothing', async () => {
    const a = await registerAgent(app);
    const ws = await buildWorkspace(app, { owner: a });
    const locked = (await mint(a.key, { workspaceId: ws.id, workspaceLocked: true })).body;
    await deleteAndWait(app, `/api/workspaces/${ws.id}`, { 'X-Agent-Key': a.key });
    const other = await buildWorkspace(app, { public: true });
    const res = await app.http.get('/api/workspaces/current').set('X-Agent-Key', locked.apiKey).set('X-Workspace-Id', other.id);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('workspace_locked');
  });
});

describe('lastUsedAt', () => {
  it('is bumped on use, at most once a minute per key (remembered in process: no Redis or Postgres round trip per request)', async () => {
    const a = await registerAgent(app);
    const keyId = await keyIdOf(a);
    const read = async () => (await app.deps.ds.query(`SELECT last_used_at FROM api_keys WHERE id = $1`, [keyId]))[0].last_used_at as Date | null;
    await until(async () => (await read()) !== null);
    // Within the minute of the last write nothing is sent, even when the stored use looks old.
    const old = new Date('2020-01-01T00:00:00Z');
    await app.deps.ds.query(`UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, [keyId, old]);
    for (let i = 0; i < 5; i++) await app.http.get('/api/agents/me').set('X-Agent-Key', a.key).expect(200);
    await new Promise((r) => setTimeout(r, 200));
    expect((await read())?.toISOString()).toBe(old.toISOString());
    // A minute later (the service's clock) the next use writes again.
    app.clock.advance(61_000);
    try {
      await app.http.get('/api/agents/me').set('X-Agent-Key', a.key).expect(200);
      await until(async () => (await read())?.toISOString() !== old.toISOString());
      const row = (await keysOf(a.key)).body[0];
      expect(new Date(row.lastUsedAt).getTime()).toBeGreaterThan(Date.now() + 30_000);
    } finally {
      app.clock.advance(-61_000);
    }
  });
});

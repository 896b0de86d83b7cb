import { accessForWorkspace, type Caller } from '../../src/api/access';
import { findWorkspace } from '../../src/services/workspaces';
import { useTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { buildWorkspace, joinWorkspace, registerAgent, type TestAgent, type TestWorkspace } from '../helpers/factories';

let app: TestApp;
useTestApp((a) => (app = a));

const as = (ws: TestWorkspace, key: string | null) => {
  const h: Record<string, string> = { 'X-Workspace-Id': ws.id };
  if (key) h['X-Agent-Key'] = key;
  return {
    get: (p: string) => app.http.get(`/api${p}`).set(h),
    post: (p: string, body: unknown = {}) => app.http.post(`/api${p}`).set(h).send(body as object),
    put: (p: string, body: unknown = {}) => app.http.put(`/api${p}`).set(h).send(body as object),
    patch: (p: string, body: unknown = {}) => app.http.patch(`/api${p}`).set(h).send(body as object),
    del: (p: string) => app.http.delete(`/api${p}`).set(h),
  };
};

async function groupsOf(ws: TestWorkspace): Promise<Array<{ id: string; name: string; system: boolean; capabilities: string[] }>> {
  const res = await as(ws, ws.owner.key).get('/groups');
  expect(res.status).toBe(200);
  return res.body;
}
const groupNamed = async (ws: TestWorkspace, name: string) => (await groupsOf(ws)).find((g) => g.name === name)!.id;

async function member(ws: TestWorkspace, group: string): Promise<TestAgent> {
  const a = await registerAgent(app);
  const res = await as(ws, ws.owner.key).post(`/groups/${await groupNamed(ws, group)}/members`, { agentId: a.id });
  expect(res.status).toBe(200);
  return a;
}

async function capsOf(ws: TestWorkspace, key: string | null): Promise<string[]> {
  const res = await as(ws, key).get('/workspaces/current');
  expect(res.status).toBe(200);
  return [...res.body.capabilities].sort();
}

describe('groups', () => {
  it('every workspace has Public [read], Trader [read, trade], Admin [read, trade, manage]; none carries manage_workspace', async () => {
    const ws = await buildWorkspace(app);
    const groups = await groupsOf(ws);
    expect(groups.map((g) => [g.name, g.system, g.capabilities])).toEqual([
      ['Public', true, ['read']],
      ['Trader', true, ['read', 'trade']],
      ['Admin', true, ['read', 'trade', 'manage']],
    ]);
  });

  it('GET /groups always needs an identity, even on a public workspace; readers see counts, managers see members', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const anon = await as(ws, null).get('/groups');
    expect(anon.status).toBe(401);
    expect(anon.body.code).toBe('authentication_required');
    const t = await registerAgent(app);
    await joinWorkspace(app, ws, t);
    const seen = await as(ws, t.key).get('/groups');
    expect(seen.status).toBe(200);
    expect(seen.body.find((g: { name: string }) => g.name === 'Trader')).toMatchObject({ memberCount: 1 });
    expect(seen.body[0].members).toBeUndefined();
    const admin = await as(ws, ws.owner.key).get('/groups');
    expect(admin.body.find((g: { name: string }) => g.name === 'Admin').members).toEqual([{ id: ws.owner.id, nickname: ws.owner.nickname }]);
  });

  it('create, rename, edit permissions, add and remove members, delete', async () => {
    const ws = await buildWorkspace(app);
    const a = await registerAgent(app);
    const created = await as(ws, ws.owner.key).post('/groups', {
      name: 'Analysts',
      capabilities: ['read'],
      metricPermissions: { m1: { read: true, trade: false } },
      sourcePermissions: { s1: { read: false } },
      members: [a.id],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Analysts',
      system: false,
      capabilities: ['read'],
      metricPermissions: { m1: { read: true, trade: false } },
      sourcePermissions: { s1: { read: false } },
      memberCount: 1,
      members: [{ id: a.id }],
    });
    // Being put in a group makes the participant a member of the workspace.
    expect(await capsOf(ws, a.key)).toEqual(['read']);
    const dup = await as(ws, ws.owner.key).post('/groups', { name: 'analysts', capabilities: [] });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('conflict');
    const id = created.body.id;
    const renamed = await as(ws, ws.owner.key).put(`/groups/${id}`, { name: 'Researchers', capabilities: ['read', 'trade'] });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Researchers', capabilities: ['read', 'trade'], metricPermissions: { m1: { read: true, trade: false } } });
    expect(await capsOf(ws, a.key)).toEqual(['read', 'trade']);
    const removed = await as(ws, ws.owner.key).del(`/groups/${id}/members/${a.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body.memberCount).toBe(0);
    // Still a member of the workspace: the Public group applies.
    expect(await capsOf(ws, a.key)).toEqual(['read']);
    expect((await as(ws, ws.owner.key).del(`/groups/${id}/members/${a.id}`)).status).toBe(404);
    expect((await as(ws, ws.owner.key).del(`/groups/${id}`)).status).toBe(204);
    expect((await as(ws, ws.owner.key).get(`/groups/${id}`)).status).toBe(404);
  });

  it('system group names are fixed and system groups cannot be deleted; their capabilities can change', async () => {
    const ws = await buildWorkspace(app);
    const trader = await groupNamed(ws, 'Trader');
    const rename = await as(ws, ws.owner.key).put(`/groups/${trader}`, { name: 'Traders' });
    expect(rename.status).toBe(409);
    expect(rename.body).toMatchObject({ code: 'conflict', error: expect.stringContaining('system group') });
    const same = await as(ws, ws.owner.key).put(`/groups/${trader}`, { name: 'Trader', capabilities: ['read'] });
    expect(same.status).toBe(200);
    expect(same.body.capabilities).toEqual(['read']);
    const del = await as(ws, ws.owner.key).del(`/groups/${trader}`);
    expect(del.status).toBe(409);
  });

  it.each([
    ['an unknown capability', { name: 'X', capabilities: ['fly'] }],
    ['a blank name', { name: '  ', capabilities: [] }],
    ['a bad metric permission', { name: 'X', capabilities: [], metricPermissions: { m: { write: true } } }],
    ['a non-boolean permission', { name: 'X', capabilities: [], sourcePermissions: { s: { read: 'yes' } } }],
    ['an unknown field', { name: 'X', capabilities: [], owner: true }],
  ])('refuses %s with 400', async (_label, body) => {
    const ws = await buildWorkspace(app);
    const res = await as(ws, ws.owner.key).post('/groups', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', error: expect.any(String) });
  });

  it('unknown group ids and participants are 404, not 500', async () => {
    const ws = await buildWorkspace(app);
    expect((await as(ws, ws.owner.key).put('/groups/not-a-uuid', { name: 'X' })).status).toBe(404);
    expect((await as(ws, ws.owner.key).get('/groups/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    const add = await as(ws, ws.owner.key).post(`/groups/${await groupNamed(ws, 'Trader')}/members`, { agentId: 'nobody-here' });
    expect(add.status).toBe(404);
    // A group of another workspace is not found here.
    const other = await buildWorkspace(app);
    expect((await as(ws, ws.owner.key).get(`/groups/${await groupNamed(other, 'Admin')}`)).status).toBe(404);
  });

  it('effective capabilities are the union over the caller’s groups', async () => {
    const ws = await buildWorkspace(app);
    const a = await registerAgent(app);
    for (const [name, caps] of [
      ['Readers', ['read']],
      ['Managers', ['manage']],
    ] as const) {
      expect((await as(ws, ws.owner.key).post('/groups', { name, capabilities: caps, members: [a.id] })).status).toBe(201);
    }
    expect(await capsOf(ws, a.key)).toEqual(['manage', 'read']);
  });
});

describe('grant escalation', () => {
  let ws: TestWorkspace;
  let admin: TestAgent;
  let trader: TestAgent;
  let coOwners: string;
  beforeAll(async () => {
    ws = await buildWorkspace(app);
    admin = await member(ws, 'Admin');
    trader = await member(ws, 'Trader');
    const g = await as(ws, ws.owner.key).post('/groups', { name: 'Co-owners', capabilities: ['read', 'manage', 'manage_workspace'] });
    expect(g.status).toBe(201);
    coOwners = g.body.id;
  });

  const refusals: Array<[string, () => Promise<{ status: number; body: any }>, string, string[]?]> = [
    ['an admin creating a group with manage_workspace', () => as(ws, admin.key).post('/groups', { name: uniqueName('g'), capabilities: ['manage_workspace'] }), 'not_authorized', ['manage_workspace']],
    ['an admin adding manage_workspace to the Admin group', async () => as(ws, admin.key).put(`/groups/${await groupNamed(ws, 'Admin')}`, { capabilities: ['read', 'trade', 'manage', 'manage_workspace'] }), 'not_authorized', ['manage_workspace']],
    ['an admin stripping manage_workspace from a group', () => as(ws, admin.key).put(`/groups/${coOwners}`, { capabilities: ['read', 'manage'] }), 'not_authorized', ['manage_workspace']],
    ['an admin adding itself to a manage_workspace group', () => as(ws, admin.key).post(`/groups/${coOwners}/members`, { agentId: admin.id }), 'not_authorized', ['manage_workspace']],
    ['an admin adding someone to a manage_workspace group', () => as(ws, admin.key).post(`/groups/${coOwners}/members`, { agentId: trader.id }), 'not_authorized', ['manage_workspace']],
    ['a trader creating a group', () => as(ws, trader.key).post('/groups', { name: uniqueName('g'), capabilities: ['read'] }), 'not_authorized', ['manage']],
    ['a trader adding itself to the Admin group', async () => as(ws, trader.key).post(`/groups/${await groupNamed(ws, 'Admin')}/members`, { agentId: trader.id }), 'not_authorized', ['manage']],
    ['a trader granting the Public group trade', async () => as(ws, trader.key).put(`/groups/${await groupNamed(ws, 'Public')}`, { capabilities: ['read', 'trade'] }), 'not_authorized', ['manage']],
    ['an admin changing visibility', () => as(ws, admin.key).patch(`/workspaces/${ws.id}`, { public: true }), 'not_authorized', ['manage_workspace']],
    ['an admin deleting the workspace', () => as(ws, admin.key).del(`/workspaces/${ws.id}`), 'not_authorized', ['manage_workspace']],
  ];

  it.each(refusals)('refuses %s', async (_label, send, code, required) => {
    const before = await groupsOf(ws);
    const res = await send();
    expect(res.status).toBe(403);
    expect(res.body.code).toBe(code);
    if (required) expect(res.body.requiredCapabilities).toEqual(required);
    expect(await groupsOf(ws)).toEqual(before);
  });

  it('an admin whose key lacks workspace:manage gets scope_denied, not a grant', async () => {
    const key = await app.http.post('/api/agents/me/keys').set('X-Agent-Key', admin.key).send({ scopes: ['workspace:trade'] });
    expect(key.status).toBe(201);
    const res = await as(ws, key.body.apiKey).post('/groups', { name: uniqueName('g'), capabilities: ['read'] });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'scope_denied', requiredScopes: ['workspace:manage'] });
  });

  it('only a holder grants manage_workspace, and a grantee may pass it on', async () => {
    const deputy = await registerAgent(app);
    const add = await as(ws, ws.owner.key).post(`/groups/${coOwners}/members`, { agentId: deputy.id });
    expect(add.status).toBe(200);
    expect(await capsOf(ws, deputy.key)).toEqual(['manage', 'manage_workspace', 'read']);
    const visibility = await as(ws, deputy.key).patch(`/workspaces/${ws.id}`, { externalProposals: false });
    expect(visibility.status).toBe(200);
    expect(visibility.body.externalProposals).toBe(false);
    // The deputy cannot grant trade, which it does not hold, but can grant manage_workspace.
    const noTrade = await as(ws, deputy.key).post('/groups', { name: uniqueName('g'), capabilities: ['trade'] });
    expect(noTrade.status).toBe(403);
    expect(noTrade.body.requiredCapabilities).toEqual(['trade']);
    const passOn = await as(ws, deputy.key).post('/groups', { name: uniqueName('g'), capabilities: ['read', 'manage_workspace'], members: [admin.id] });
    expect(passOn.status).toBe(201);
    expect(await capsOf(ws, admin.key)).toEqual(['manage', 'manage_workspace', 'read', 'trade']);
  });
});

describe('public group and per-metric permissions', () => {
  it('an anonymous caller reads a public workspace, read only even where the Public group grants trade', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const publicId = await groupNamed(ws, 'Public');
    expect((await as(ws, ws.owner.key).put(`/groups/${publicId}`, { capabilities: ['read', 'trade'] })).status).toBe(200);
    expect(await capsOf(ws, null)).toEqual(['read']);
    // An identity, even a non-member, gets what the Public group grants on a public workspace.
    const stranger = await registerAgent(app);
    expect(await capsOf(ws, stranger.key)).toEqual(['read', 'trade']);
    const anonTrade = await as(ws, null).post('/predictions/trade', { marketId: '00000000-0000-0000-0000-000000000000', direction: 'higher', amount: 1, dryRun: true });
    // Anonymous where the workspace can be read: only an identity is missing (403 identity_required, spec §7).
    expect([anonTrade.status, anonTrade.body.code]).toEqual([403, 'identity_required']);
  });

  function callerOf(agent: TestAgent | null, isMaster = false): Caller | null {
    if (!agent) return null;
    return { agentId: agent.id, keyId: null, scopes: isMaster ? null : ['*'], isMaster, keyWorkspaceId: null, keyLocked: false };
  }

  it('per-metric read and trade narrow what the groups grant; manage sees everything (WorkspaceAccess.metricReadable)', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const trader = await member(ws, 'Trader');
    const admin = await member(ws, 'Admin');
    const [pub, trd] = [await groupNamed(ws, 'Public'), await groupNamed(ws, 'Trader')];
    expect((await as(ws, ws.owner.key).put(`/groups/${pub}`, { metricPermissions: { secret: { read: false } } })).status).toBe(200);
    expect((await as(ws, ws.owner.key).put(`/groups/${trd}`, { metricPermissions: { secret: { read: false }, frozen: { trade: false } } })).status).toBe(200);
    const row = (await findWorkspace(app.deps.ds, ws.id))!;
    const access = async (agent: TestAgent | null) => accessForWorkspace(app.deps, callerOf(agent), row);
    const anon = await access(null);
    expect([anon.metricReadable('secret'), anon.metricReadable('open'), anon.metricTradable('open')]).toEqual([false, true, false]);
    const t = await access(trader);
    expect([t.metricReadable('secret'), t.metricTradable('secret'), t.metricReadable('frozen'), t.metricTradable('frozen'), t.metricTradable('open')]).toEqual([
      false,
      false,
      true,
      false,
      true,
    ]);
    for (const who of [await access(admin), await access(ws.owner)]) expect([who.metricReadable('secret'), who.metricTradable('frozen')]).toEqual([true, true]);
    // A second group that does not restrict the metric widens it again (union over groups).
    const g = await as(ws, ws.owner.key).post('/groups', { name: 'Insiders', capabilities: ['read'], members: [trader.id] });
    expect(g.status).toBe(201);
    expect((await access(trader)).metricReadable('secret')).toBe(true);
    expect((await access(trader)).sourceReadable('any')).toBe(true);
  });
});

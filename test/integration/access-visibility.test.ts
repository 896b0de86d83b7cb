import { expectLedgerSound, useTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { buildWorkspace, joinWorkspace, registerAgent, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { deleteAndWait } from '../helpers/deletions';
import { expected, type MatrixEndpoint } from '../helpers/accessMatrix';

/** Visibility (spec §5.3), workspace settings and deletion (§5.4), view links. */

let app: TestApp;
useTestApp((a) => (app = a));

async function admin(ws: TestWorkspace): Promise<TestAgent> {
  const a = await registerAgent(app);
  const groups = await app.http.get('/api/groups').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
  const id = groups.body.find((g: { name: string }) => g.name === 'Admin').id;
  await app.http.post(`/api/groups/${id}/members`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ agentId: a.id }).expect(200);
  return a;
}

const anonRead = (ws: TestWorkspace, h: Record<string, string> = {}) => app.http.get('/api/workspaces/current').set({ 'X-Workspace-Id': ws.slug, ...h });

describe('public and private reads', () => {
  it('a public workspace answers reads anonymously (by id or slug); a private one answers 401', async () => {
    const pub = await buildWorkspace(app, { public: true });
    const priv = await buildWorkspace(app);
    const byId = await app.http.get('/api/workspaces/current').set('X-Workspace-Id', pub.id);
    expect(byId.status).toBe(200);
    expect(byId.body.capabilities).toEqual(['read']);
    expect((await anonRead(pub)).status).toBe(200);
    const res = await anonRead(priv);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('authentication_required');
    expect((await app.http.get('/api/workspaces/current').set('X-Workspace-Id', 'no-such-space')).status).toBe(404);
  });
});

describe('workspace settings', () => {
  it('name and description need manage; visibility, outside proposals and default liquidities need manage_workspace', async () => {
    const ws = await buildWorkspace(app);
    const adm = await admin(ws);
    const rename = await app.http.patch(`/api/workspaces/${ws.id}`).set('X-Agent-Key', adm.key).send({ name: 'Renamed', description: 'by an admin' });
    expect(rename.status).toBe(200);
    expect(rename.body).toMatchObject({ name: 'Renamed', description: 'by an admin', public: false });
    for (const body of [{ public: true }, { visibility: 'public' }, { externalProposals: false }, { defaultLiquidityCredits: 5 }, { defaultProposalLiquidityCredits: 5 }, { name: 'X', public: true }]) {
      const res = await app.http.patch(`/api/workspaces/${ws.id}`).set('X-Agent-Key', adm.key).send(body);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'not_authorized', requiredCapabilities: ['manage_workspace'] });
    }
    const cur = await app.http.get('/api/workspaces/current').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
    expect(cur.body).toMatchObject({ name: 'Renamed', public: false, externalProposals: true });
    const owner = await app.http
      .patch(`/api/workspaces/${ws.slug}`)
      .set('X-Agent-Key', ws.owner.key)
      .send({ visibility: 'public', externalProposals: false, defaultLiquidityCredits: 250.5, defaultProposalLiquidityCredits: 20 });
    expect(owner.status).toBe(200);
    expect(owner.body).toMatchObject({ public: true, externalProposals: false, defaultLiquidityCredits: 250.5, defaultProposalLiquidityCredits: 20 });
    expect((await anonRead(ws)).status).toBe(200);
    const back = await app.http.patch(`/api/workspaces/${ws.id}`).set('X-Agent-Key', ws.owner.key).send({ public: false });
    expect(back.body.public).toBe(false);
    expect((await anonRead(ws)).status).toBe(401);
  });

  it.each([
    ['public and visibility that disagree', { public: true, visibility: 'private' }],
    ['a bad visibility', { visibility: 'hidden' }],
    ['negative liquidity', { defaultLiquidityCredits: -1 }],
    ['an unknown field', { owner: 'me' }],
  ])('refuses %s with 400', async (_label, body) => {
    const ws = await buildWorkspace(app);
    const res = await app.http.patch(`/api/workspaces/${ws.id}`).set('X-Agent-Key', ws.owner.key).send(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('the workspace is the one in the path, whatever X-Workspace-Id says', async () => {
    const ws = await buildWorkspace(app);
    const mine = await buildWorkspace(app);
    const res = await app.http.patch(`/api/workspaces/${ws.id}`).set('X-Agent-Key', mine.owner.key).set('X-Workspace-Id', mine.id).send({ name: 'hijack' });
    expect(res.status).toBe(403);
    expect((await app.http.patch(`/api/workspaces/${uniqueName('none')}`).set('X-Agent-Key', mine.owner.key).send({ name: 'x' })).status).toBe(404);
  });
});

describe('view links', () => {
  it('a manager mints or gets the link; it grants read on that workspace only; revocable', async () => {
    const ws = await buildWorkspace(app);
    const adm = await admin(ws);
    const t = await registerAgent(app);
    const noManage = await app.http.get(`/api/workspaces/${ws.id}/view-link`).set('X-Agent-Key', t.key);
    expect(noManage.status).toBe(403);
    const first = await app.http.get(`/api/workspaces/${ws.id}/view-link`).set('X-Agent-Key', ws.owner.key);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token: expect.stringMatching(/^vl_/), workspaceId: ws.id, url: expect.stringContaining(first.body.token), created: true });
    const again = await app.http.get(`/api/workspaces/${ws.id}/view-link`).set('X-Agent-Key', adm.key);
    expect(again.body).toMatchObject({ token: first.body.token, created: false });
    const token = first.body.token;
    // Read with no key; nothing else.
    expect((await anonRead(ws, { 'X-View-Link': token })).status).toBe(200);
    expect((await app.http.get('/api/groups').set({ 'X-Workspace-Id': ws.id, 'X-View-Link': token })).status).toBe(401);
    expect((await app.http.get('/api/agents').set({ 'X-Workspace-Id': ws.id, 'X-View-Link': token })).status).toBe(401);
    // An identity with no membership also reads through the link.
    const viaKey = await app.http.get('/api/workspaces/current').set({ 'X-Workspace-Id': ws.id, 'X-View-Link': token, 'X-Agent-Key': t.key });
    expect(viaKey.status).toBe(200);
    expect(viaKey.body.capabilities).toEqual(['read']);
    expect((await anonRead(ws, { 'X-View-Link': 'vl_forged' })).status).toBe(401);
    // Revoke: the link stops working at once; the next GET mints a new one.
    expect((await app.http.delete(`/api/workspaces/${ws.id}/view-link`).set('X-Agent-Key', adm.key)).status).toBe(204);
    expect((await anonRead(ws, { 'X-View-Link': token })).status).toBe(401);
    const fresh = await app.http.get(`/api/workspaces/${ws.id}/view-link`).set('X-Agent-Key', ws.owner.key);
    expect(fresh.body.token).not.toBe(token);
    expect((await anonRead(ws, { 'X-View-Link': fresh.body.token })).status).toBe(200);
  });
});

describe('acting without an identity (spec §5, §7)', () => {
  it('403 identity_required where the caller may read (public workspace, view link); 401 authentication_required elsewhere', async () => {
    const pub = await buildWorkspace(app, { public: true });
    const priv = await buildWorkspace(app);
    const link = (await app.http.get(`/api/workspaces/${priv.id}/view-link`).set('X-Agent-Key', priv.owner.key).expect(200)).body.token;
    // Each act as the shared access matrix (test/helpers/accessMatrix.ts) describes it; its cells are what the API must answer.
    const acts: Array<{ e: MatrixEndpoint; send: (h: Record<string, string>) => Promise<{ status: number; body: any }> }> = [
      {
        e: { name: 'trade: POST /predictions/trade', method: 'POST', needs: ['trade'] },
        send: (h) => app.http.post('/api/predictions/trade').set(h).send({ marketId: '00000000-0000-4000-8000-000000000000', direction: 'higher', amount: 1 }),
      },
      { e: { name: 'trade: POST /proposals', method: 'POST', needs: ['trade'] }, send: (h) => app.http.post('/api/proposals').set(h).send({ title: 'Anonymous idea' }) },
      { e: { name: 'manage: POST /metrics', method: 'POST', needs: ['manage'] }, send: (h) => app.http.post('/api/metrics').set(h).send({ name: 'anon', value: 1 }) },
    ];
    const expectCode = async (res: Promise<{ status: number; body: any }>, status: number, code: string) => {
      const r = await res;
      expect({ status: r.status, code: r.body.code }).toEqual({ status, code });
      expect(r.body.error).toEqual(expect.any(String));
    };
    const expectCell = async (res: Promise<{ status: number; body: any }>, cell: string) => {
      const [status, code] = cell.split(' ');
      await expectCode(res, Number(status), code);
    };
    for (const { e, send } of acts) {
      const reads = expected(e, { kind: 'view-link' });
      const none = expected(e, { kind: 'none' });
      expect({ reads, none }).toEqual({ reads: '403 identity_required', none: '401 authentication_required' });
      // The public workspace reads anonymously: acting there only lacks an identity.
      await expectCell(send({ 'X-Workspace-Id': pub.id }), reads);
      // A view-link holder acting: read only, so identity_required.
      await expectCell(send({ 'X-Workspace-Id': priv.id, 'X-View-Link': link }), reads);
      await expectCell(send({ 'X-View-Link': link }), reads);
      // A private workspace without a link, or no workspace at all: no credentials where they are the only way in.
      await expectCell(send({ 'X-Workspace-Id': priv.id }), none);
      await expectCell(send({}), none);
      await expectCell(send({ 'X-Workspace-Id': priv.id, 'X-View-Link': 'vl_forged' }), none);
    }
    // Reads that always need an identity (groups, sources) stay 401 even where the workspace reads anonymously.
    await expectCode(app.http.get('/api/groups').set({ 'X-Workspace-Id': pub.id }), 401, 'authentication_required');
    // Nothing was written.
    expect((await app.http.get('/api/metrics').set('X-Workspace-Id', pub.id)).body).toEqual([]);
  });
});

describe('workspace deletion', () => {
  it('needs manage_workspace; refunds every open book first; the workspace is gone afterwards', async () => {
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 1000 });
    const adm = await admin(ws);
    const t = await registerAgent(app);
    await joinWorkspace(app, ws, t);
    await app.http.post(`/api/agents/${t.id}/credit`).set('X-API-Key', app.masterKey).send({ amount: 100 }).expect(200);
    const metric = await app.http.post('/api/metrics').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ name: uniqueName('m'), value: 400 });
    expect([200, 201]).toContain(metric.status);
    const books = await app.http.get(`/api/predictions/markets?metricId=${metric.body.id}`).set('X-Workspace-Id', ws.id);
    expect(books.body.length).toBeGreaterThan(0);
    const traded = await app.http.post('/api/predictions/trade').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id).send({ marketId: books.body[0].id, direction: 'higher', amount: 30 });
    expect(traded.status).toBe(200);
    const ownerBefore = (await app.http.get('/api/agents/me/balance').set('X-Agent-Key', ws.owner.key)).body.balance;
    expect(ownerBefore).toBeLessThan(1000);
    expect((await app.http.delete(`/api/workspaces/${ws.id}`).set('X-Agent-Key', adm.key)).status).toBe(403);
    expect((await app.http.delete(`/api/workspaces/${ws.id}`).set('X-Agent-Key', t.key)).status).toBe(403);
    await deleteAndWait(app, `/api/workspaces/${ws.id}`, { 'X-Agent-Key': ws.owner.key });
    // Refunds: the trader gets its stake back, the owner the books' liquidity.
    expect((await app.http.get('/api/agents/me/balance').set('X-Agent-Key', t.key)).body.balance).toBeCloseTo(100, 6);
    expect((await app.http.get('/api/agents/me/balance').set('X-Agent-Key', ws.owner.key)).body.balance).toBeCloseTo(1000, 6);
    const pools = await app.deps.ds.query(`SELECT count(*)::int AS n FROM accounts WHERE id = ANY($1) AND balance <> 0`, [books.body.map((b: { id: string }) => `pool:${b.id}`)]);
    expect(pools[0].n).toBe(0);
    expect((await anonRead(ws)).status).toBe(404);
    expect((await app.http.get('/api/workspaces/current').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id)).status).toBe(404);
    await expectLedgerSound(app.deps);
  });
});

import { expectLedgerSound, useTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { buildWorkspace, joinWorkspace, mint, registerAgent, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { deleteAndWait, waitForDeletion } from '../helpers/deletions';

let app: TestApp;
useTestApp((a) => (app = a));

const createChild = (key: string, body: Record<string, unknown>) => app.http.post('/api/agents').set('X-Agent-Key', key).send(body);
const balance = async (key: string) => (await app.http.get('/api/agents/me/balance').set('X-Agent-Key', key)).body.balance as number;
const exists = async (id: string) => (await app.http.get(`/api/agents/${id}`).set('X-API-Key', app.masterKey)).status === 200;

async function groupId(ws: TestWorkspace, name: string): Promise<string> {
  const res = await app.http.get('/api/groups').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
  return res.body.find((g: { name: string }) => g.name === name).id;
}

async function addAdmin(ws: TestWorkspace, agent: TestAgent): Promise<void> {
  const res = await app.http.post(`/api/groups/${await groupId(ws, 'Admin')}/members`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ agentId: agent.id });
  expect(res.status).toBe(200);
}

describe('POST /agents (child participants)', () => {
  it('creates a bot with memberships, a key (default scopes read+trade) and credits moved from the caller', async () => {
    const ws = await buildWorkspace(app, { ownerCredits: 500 });
    const agentId = uniqueName('bot');
    const res = await createChild(ws.owner.key, { agentId, keyLabel: 'runner', memberships: [{ workspaceId: ws.slug, groupIds: [await groupId(ws, 'Trader')] }], initialCredits: 120.5 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      agentId,
      apiKey: expect.stringMatching(/^mpk_/),
      keyId: expect.stringMatching(/^key_/),
      scopes: ['workspace:read', 'workspace:trade'],
      label: 'runner',
      memberships: [{ workspaceId: ws.id, groupIds: [await groupId(ws, 'Trader')] }],
      balance: 120.5,
    });
    expect(await balance(ws.owner.key)).toBe(379.5);
    const bot = res.body.apiKey as string;
    // The key's default workspace is its first membership; it can read and trade there, not manage.
    const cur = await app.http.get('/api/workspaces/current').set('X-Agent-Key', bot);
    expect(cur.body).toMatchObject({ id: ws.id, capabilities: ['read', 'trade'] });
    expect((await app.http.get('/api/agents/me/balance').set('X-Agent-Key', bot)).status).toBe(200);
    expect((await app.http.get('/api/agents/me/keys').set('X-Agent-Key', bot)).body.code).toBe('scope_denied');
    // The creator manages the bot's keys (self/owner).
    const keys = await app.http.get(`/api/agents/${agentId}/keys`).set('X-Agent-Key', ws.owner.key);
    expect(keys.status).toBe(200);
    expect(keys.body).toEqual([expect.objectContaining({ keyId: res.body.keyId, label: 'runner', scopes: ['workspace:read', 'workspace:trade'], workspaceId: ws.id })]);
    const me = await app.http.get(`/api/agents/${agentId}`).set('X-API-Key', app.masterKey);
    expect(me.body).toMatchObject({ parent: ws.owner.id, bot: true, balance: 120.5 });
    await expectLedgerSound(app.deps);
  });

  it('membership without groupIds joins the Trader group; with [] only the Public group applies', async () => {
    const ws = await buildWorkspace(app);
    const a = await createChild(ws.owner.key, { agentId: uniqueName('bot'), memberships: [{ workspaceId: ws.id }] });
    expect(a.body.memberships).toEqual([{ workspaceId: ws.id, groupIds: [await groupId(ws, 'Trader')] }]);
    const b = await createChild(ws.owner.key, { agentId: uniqueName('bot'), memberships: [{ workspaceId: ws.id, groupIds: [] }] });
    const cur = await app.http.get('/api/workspaces/current').set('X-Agent-Key', b.body.apiKey);
    expect(cur.body.capabilities).toEqual(['read']);
  });

  it('nothing is created when the credits are unaffordable', async () => {
    const ws = await buildWorkspace(app, { ownerCredits: 10 });
    const agentId = uniqueName('poor');
    const res = await createChild(ws.owner.key, { agentId, memberships: [{ workspaceId: ws.id }], initialCredits: 10.000000001 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'insufficient_balance', balance: 10, cost: 10.000000001 });
    expect(await exists(agentId)).toBe(false);
    expect(await balance(ws.owner.key)).toBe(10);
    const again = await createChild(ws.owner.key, { agentId, initialCredits: 10 });
    expect(again.status).toBe(201);
    expect(await balance(ws.owner.key)).toBe(0);
  });

  it('the master key issues the initial credits', async () => {
    const res = await app.http.post('/api/agents').set('X-API-Key', app.masterKey).send({ agentId: uniqueName('house'), initialCredits: 42 });
    expect(res.status).toBe(201);
    expect(res.body.balance).toBe(42);
    await expectLedgerSound(app.deps);
  });

  describe('refusals (nothing created)', () => {
    let ws: TestWorkspace;
    let trader: TestAgent;
    let admin: TestAgent;
    let coOwners: string;
    beforeAll(async () => {
      ws = await buildWorkspace(app);
      trader = await registerAgent(app);
      await app.http.post(`/api/groups/${await groupId(ws, 'Trader')}/members`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ agentId: trader.id });
      admin = await registerAgent(app);
      await addAdmin(ws, admin);
      await mint(app, admin.id, 100);
      const g = await app.http.post('/api/groups').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ name: 'Owners', capabilities: ['read', 'manage_workspace'] });
      coOwners = g.body.id;
    });

    const cases: Array<[string, () => Promise<{ key: string; body: Record<string, unknown> }>, number, string]> = [
      ['a trader listing a workspace (needs manage)', async () => ({ key: trader.key, body: { memberships: [{ workspaceId: ws.id }] } }), 403, 'not_authorized'],
      ['a stranger listing a workspace', async () => ({ key: (await registerAgent(app)).key, body: { memberships: [{ workspaceId: ws.id }] } }), 403, 'not_authorized'],
      ['an admin granting a manage_workspace group', async () => ({ key: admin.key, body: { memberships: [{ workspaceId: ws.id, groupIds: [coOwners] }] } }), 403, 'not_authorized'],
      [
        'a key minting broader scopes than its own',
        async () => {
          const k = await app.http.post('/api/agents/me/keys').set('X-Agent-Key', admin.key).send({ scopes: ['workspace:manage', 'account:agents'] });
          return { key: k.body.apiKey, body: { keyScopes: ['*'] } };
        },
        403,
        'scope_denied',
      ],
      [
        'a key without account:agents',
        async () => {
          const k = await app.http.post('/api/agents/me/keys').set('X-Agent-Key', admin.key).send({ scopes: ['workspace:manage'] });
          return { key: k.body.apiKey, body: {} };
        },
        403,
        'scope_denied',
      ],
      ['an unknown workspace', async () => ({ key: admin.key, body: { memberships: [{ workspaceId: 'no-such-ws' }] } }), 404, 'workspace_not_found'],
      ['a group of another workspace', async () => ({ key: admin.key, body: { memberships: [{ workspaceId: ws.id, groupIds: [await groupId(await buildWorkspace(app), 'Trader')] }] } }), 404, 'not_found'],
      ['a negative credit amount', async () => ({ key: admin.key, body: { initialCredits: -1 } }), 400, 'validation_failed'],
      ['a bad agent id', async () => ({ key: admin.key, body: { agentId: 'a b' } }), 400, 'validation_failed'],
    ];

    it.each(cases)('refuses %s', async (_label, make, status, code) => {
      const { key, body } = await make();
      const agentId = uniqueName('refused');
      const before = await balance(admin.key);
      const res = await createChild(key, { agentId, initialCredits: 5, ...body });
      expect(res.status).toBe(status);
      expect(res.body).toMatchObject({ code, error: expect.any(String) });
      expect(await exists(agentId)).toBe(false);
      expect(await balance(admin.key)).toBe(before);
    });

    it('a taken agent id is 409 and nothing moves', async () => {
      const before = await balance(admin.key);
      const res = await createChild(admin.key, { agentId: trader.id, nickname: uniqueName('n'), initialCredits: 5 });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('nickname_taken');
      const byNick = await createChild(admin.key, { agentId: uniqueName('x'), nickname: trader.nickname.toUpperCase(), initialCredits: 5 });
      expect(byNick.status).toBe(409);
      expect(await balance(admin.key)).toBe(before);
    });
  });
});

describe('GET /agents/mine and GET /agents', () => {
  it('mine lists the caller first, then its bots, with earnings columns', async () => {
    const ws = await buildWorkspace(app);
    const bot = await createChild(ws.owner.key, { agentId: uniqueName('bot'), memberships: [{ workspaceId: ws.id }] });
    const res = await app.http.get('/api/agents/mine?fresh=1').set('X-Agent-Key', ws.owner.key);
    expect(res.status).toBe(200);
    expect(res.body.map((r: { id: string }) => r.id)).toEqual([ws.owner.id, bot.body.agentId]);
    for (const row of res.body) {
      expect(row).toMatchObject({ earned: expect.any(Number), settledEarnings: expect.any(Number), openEarnings: expect.any(Number), totalTrades: expect.any(Number), earnedAsOf: expect.any(String) });
      expect(row).toHaveProperty('lastTradeAt');
    }
    expect(res.body[0].self).toBe(true);
    // The bot sees only itself.
    const k = await app.http.post(`/api/agents/${bot.body.agentId}/keys`).set('X-Agent-Key', ws.owner.key).send({ scopes: ['account:read'] });
    const botMine = await app.http.get('/api/agents/mine').set('X-Agent-Key', k.body.apiKey);
    expect(botMine.body.map((r: { id: string }) => r.id)).toEqual([bot.body.agentId]);
  });

  it('the catalog list needs manage and carries groups, role and PnL columns', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const t = await registerAgent(app);
    await joinWorkspace(app, ws, t);
    const list = await app.http.get('/api/agents').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    expect(list.body.find((r: { id: string }) => r.id === t.id)).toMatchObject({ groups: ['Trader'], role: 'agent', realizedPnl: 0, pnlConsensus: 0, pnlMetric: 0 });
    expect(list.body.find((r: { id: string }) => r.id === ws.owner.id)).toMatchObject({ groups: ['Admin'], role: 'admin' });
    const denied = await app.http.get('/api/agents').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'not_authorized', requiredCapabilities: ['manage'] });
  });

  it('PnL and earnings columns come from the participant’s positions', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const t = await registerAgent(app);
    await joinWorkspace(app, ws, t);
    await mint(app, t.id, 100);
    const metric = await app.http.post('/api/metrics').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ name: uniqueName('m'), value: 500 });
    const books = await app.http.get(`/api/predictions/markets?metricId=${metric.body.id}`).set('X-Workspace-Id', ws.id);
    const traded = await app.http.post('/api/predictions/trade').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id).send({ marketId: books.body[0].id, direction: 'higher', amount: 20 });
    expect(traded.status).toBe(200);
    const list = await app.http.get('/api/agents').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
    const row = list.body.find((r: { id: string }) => r.id === t.id);
    expect(row.realizedPnl).toBe(0);
    // The same marks as the per-market breakdown.
    const perMarket = await app.http.get(`/api/agents/${t.id}/market-pnl`).set('X-Agent-Key', t.key);
    expect(perMarket.body).toHaveLength(1);
    expect(row.pnlConsensus).toBeCloseTo(perMarket.body[0].pnlConsensus, 9);
    expect(row.pnlMetric).toBeCloseTo(perMarket.body[0].pnlMetric, 9);
    expect(row.pnlConsensus).not.toBe(0);
    const mine = await app.http.get('/api/agents/mine').set('X-Agent-Key', t.key);
    expect(mine.body[0]).toMatchObject({ id: t.id, totalTrades: 1, settledEarnings: 0, lastTradeAt: expect.any(String) });
    expect(mine.body[0].earned).toBeCloseTo(mine.body[0].settledEarnings + mine.body[0].openEarnings, 9);
    expect(mine.body[0].openEarnings).toBeCloseTo(row.pnlConsensus, 9);
  });
});

describe('DELETE /agents/{id}', () => {
  it('the creator deletes a bot; its credits go back to the creator and its key stops working', async () => {
    const ws = await buildWorkspace(app, { ownerCredits: 300 });
    const bot = await createChild(ws.owner.key, { agentId: uniqueName('bot'), memberships: [{ workspaceId: ws.id }], initialCredits: 100 });
    const { res: del } = await deleteAndWait(app, `/api/agents/${bot.body.agentId}`, { 'X-Agent-Key': ws.owner.key });
    expect(del.body).toMatchObject({ ok: true, agentId: bot.body.agentId, creditsReturned: 100, returnedTo: { account: `agent:${ws.owner.id}`, agentId: ws.owner.id } });
    expect(del.body.deletion).toMatchObject({ kind: 'participant', targetId: bot.body.agentId });
    expect(await balance(ws.owner.key)).toBe(300);
    expect((await app.http.get('/api/agents/me').set('X-Agent-Key', bot.body.apiKey)).status).toBe(401);
    expect(await exists(bot.body.agentId)).toBe(false);
    expect((await app.http.delete(`/api/agents/${bot.body.agentId}`).set('X-Agent-Key', ws.owner.key)).status).toBe(404);
    await expectLedgerSound(app.deps);
  });

  it('credits of a participant with no parent or creator go to the treasury', async () => {
    const a = await registerAgent(app);
    await mint(app, a.id, 7.25);
    const treasury = async () => BigInt((await app.deps.ds.query(`SELECT balance FROM accounts WHERE id = 'treasury'`))[0].balance);
    const before = await treasury();
    // No workspace memberships: the participant itself may delete itself.
    const { res: del } = await deleteAndWait(app, '/api/agents/me', { 'X-Agent-Key': a.key });
    expect(del.body).toMatchObject({ creditsReturned: 7.25, returnedTo: { account: 'treasury', agentId: null } });
    expect((await treasury()) - before).toBe(7_250_000_000n);
    await expectLedgerSound(app.deps);
  });

  it('a deleted participant’s open positions stay with the book and the ledger stays sound', async () => {
    const ws = await buildWorkspace(app, { ownerCredits: 10_000 });
    const metric = await app.http.post('/api/metrics').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ name: uniqueName('m'), value: 500 });
    expect([200, 201]).toContain(metric.status);
    const books = await app.http.get(`/api/predictions/markets?metricId=${metric.body.id}`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
    const marketId = books.body[0].id;
    const bot = await createChild(ws.owner.key, { agentId: uniqueName('bot'), memberships: [{ workspaceId: ws.id }], initialCredits: 50 });
    const t = await app.http.post('/api/predictions/trade').set('X-Agent-Key', bot.body.apiKey).set('X-Workspace-Id', ws.id).send({ marketId, direction: 'higher', amount: 20 });
    expect(t.status).toBe(200);
    const { res: del } = await deleteAndWait(app, `/api/agents/${bot.body.agentId}`, { 'X-Agent-Key': ws.owner.key });
    expect(del.body.creditsReturned).toBeCloseTo(30, 9);
    await expectLedgerSound(app.deps);
    // The book still settles (voided here by deleting the workspace) without the deleted holder.
    await deleteAndWait(app, `/api/workspaces/${ws.id}`, { 'X-Agent-Key': ws.owner.key });
    await expectLedgerSound(app.deps);
  });

  it('a deleted participant’s resting orders are cancelled first: their reserves go with its balance, none is stranded (found by the stateful fuzz)', async () => {
    const ws = await buildWorkspace(app, { ownerCredits: 10_000 });
    const metric = await app.http.post('/api/metrics').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ name: uniqueName('m'), value: 500 });
    const books = await app.http.get(`/api/predictions/markets?metricId=${metric.body.id}`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
    const [a, b] = [books.body[0].id, books.body[1].id];
    const bot = await createChild(ws.owner.key, { agentId: uniqueName('bot'), memberships: [{ workspaceId: ws.id }], initialCredits: 50 });
    for (const [marketId, direction, limit] of [[a, 'lower', 950], [b, 'higher', 50]] as const) {
      const o = await app.http.post('/api/predictions/orders').set('X-Agent-Key', bot.body.apiKey).set('X-Workspace-Id', ws.id).send({ marketId, direction, limit, shares: 100 });
      expect(o.body).toMatchObject({ status: 'open', reserved: 5 });
    }
    const del = await app.http.delete(`/api/agents/${bot.body.agentId}`).set('X-Agent-Key', ws.owner.key);
    expect(del.status).toBe(202);
    expect(del.body.creditsReturned).toBeCloseTo(50, 9); // 40 left + the two reserves of 5
    await waitForDeletion(app, del);
    const reserves = await app.deps.ds.query(`SELECT coalesce(sum(balance), 0)::text AS s FROM accounts WHERE id = ANY($1)`, [[`reserve:${a}`, `reserve:${b}`]]);
    expect(reserves[0].s).toBe('0');
    await expectLedgerSound(app.deps);
  });

  it('needs self, creator or master, and manage in a workspace the participant belongs to', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const admin = await registerAgent(app);
    await addAdmin(ws, admin);
    const t = await registerAgent(app);
    await joinWorkspace(app, ws, t);
    // A workspace admin who is not the creator: refused.
    const byAdmin = await app.http.delete(`/api/agents/${t.id}`).set('X-Agent-Key', admin.key);
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.code).toBe('not_authorized');
    // The participant itself without manage in any of its workspaces: refused.
    const bySelf = await app.http.delete('/api/agents/me').set('X-Agent-Key', t.key);
    expect(bySelf.status).toBe(403);
    expect(bySelf.body).toMatchObject({ code: 'not_authorized', requiredCapabilities: ['manage'] });
    // The admin's own bot in the workspace: allowed.
    const bot = await createChild(admin.key, { agentId: uniqueName('bot'), memberships: [{ workspaceId: ws.id }] });
    await deleteAndWait(app, `/api/agents/${bot.body.agentId}`, { 'X-Agent-Key': admin.key });
    // The master key: allowed.
    await deleteAndWait(app, `/api/agents/${t.id}`, { 'X-API-Key': app.masterKey });
    // A workspace owner must delete its workspaces first; the platform cannot be deleted.
    const owner = await app.http.delete(`/api/agents/${ws.owner.id}`).set('X-API-Key', app.masterKey);
    expect(owner.status).toBe(409);
    expect(owner.body.workspaces).toEqual([ws.slug]);
    expect((await app.http.delete('/api/agents/platform').set('X-API-Key', app.masterKey)).status).toBe(409);
    await expectLedgerSound(app.deps);
  });
});

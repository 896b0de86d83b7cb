import { expectLedgerSound, uniqueName, useTestApp, type TestApp } from '../helpers/harness';
import { buildWorkspace, mint, registerAgent } from '../helpers/factories';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

/** Input hygiene (issue 26): one rule each for text, credit amounts, path ids and bodies where none is taken. */
let app: TestApp;
useTestApp((a) => (app = a));

// Scoped counts: other suites write to the same database at the same time.
const count = async (table: 'proposals' | 'workspaces', column: string, id: string) =>
  Number((await app.deps.ds.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [id]))[0].n);

describe('text is valid Unicode or refused', () => {
  it('a lone surrogate in a proposal title is a 400 naming the field (was a 500 on the way into an event)', async () => {
    const ws = await buildWorkspace(app);
    const before = await count('proposals', 'workspace_id', ws.id);
    const res = await app.http.post('/api/proposals').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ title: 'half \ud83d of a pair', description: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.error).toMatch(/body field "title".*valid UTF-8/);
    expect(await count('proposals', 'workspace_id', ws.id)).toBe(before);
  });

  it('invalid UTF-8 bytes in a workspace name are refused, not stored as replacement characters', async () => {
    const owner = await registerAgent(app);
    await mint(app, owner.id, 10);
    const before = await count('workspaces', 'owner_id', owner.id);
    const raw = Buffer.concat([Buffer.from('{"name":"bad '), Buffer.from([0xc3, 0x28]), Buffer.from(' bytes","public":false}')]);
    // The bytes as they are (superagent would JSON-encode a Buffer as {"type":"Buffer","data":[…]}).
    const res = await app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).set('Content-Type', 'application/json').serialize((b: unknown) => b as string).send(raw);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/body field "name"/);
    // A lone low surrogate as a JSON escape, in a key this time.
    const esc = await app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).set('Content-Type', 'application/json').send(`{"name":"${uniqueName('ws')}","\\udc00":1}`);
    expect(esc.status).toBe(400);
    expect(await count('workspaces', 'owner_id', owner.id)).toBe(before);
    // Paired surrogates (an emoji) are ordinary text.
    const ok = await app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).send({ name: `${uniqueName('ws')} \ud83d\ude80` });
    expect(ok.status).toBe(201);
    await expectLedgerSound(app.deps);
  });
});

describe('one credit-amount rule: at most 9 decimals, finer refused (never rounded to 0)', () => {
  it('proposal liquidity, workspace defaults and transfers refuse 1e-10; 1e-9 is fine', async () => {
    const ws = await buildWorkspace(app);
    const h = () => app.http.post('/api/proposals').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
    const fine = await h().send({ title: 'p', description: 'd', liquidity: 1e-10 });
    expect(fine.status).toBe(400);
    expect(fine.body.error).toMatch(/liquidity.*at most 9 decimals/);
    const ws2 = await app.http.post('/api/workspaces').set('X-Agent-Key', ws.owner.key).send({ name: uniqueName('ws'), defaultLiquidityCredits: 0.0000000001 });
    expect(ws2.status).toBe(400);
    const b = await registerAgent(app);
    const tooFine = await app.http.post('/api/agents/transfer').set('X-Agent-Key', ws.owner.key).send({ toAgent: b.id, amount: 1.0000000001 });
    expect(tooFine.status).toBe(400);
    await app.http.post('/api/agents/transfer').set('X-Agent-Key', ws.owner.key).send({ toAgent: b.id, amount: 1.000000001 }).expect(200);
    await expectLedgerSound(app.deps);
  });
});

describe('path ids and bodies', () => {
  it('a withdrawal id that is not a UUID is a 400 (was a 500 from Postgres)', async () => {
    for (const decision of ['approve', 'reject']) {
      const res = await app.http.post(`/api/agents/withdrawals/not-a-uuid/${decision}`).set('X-API-Key', app.masterKey).send({});
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'validation_failed' });
      expect(res.body.error).toMatch(/withdrawal id/);
    }
  });

  it('a DELETE refuses invalid JSON and a non-empty body; an empty one is fine', async () => {
    const ws = await buildWorkspace(app);
    const link = () => app.http.delete(`/api/workspaces/${ws.id}/view-link`).set('X-Agent-Key', ws.owner.key);
    const invalid = await link().set('Content-Type', 'application/json').send('{not json');
    expect(invalid.status).toBe(400);
    const extra = await link().send({ confirm: true });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatch(/takes no body/);
    expect([200, 204]).toContain((await link().send({})).status);
    expect([200, 204]).toContain((await link()).status);
  });
});

describe('contradictory identifiers are refused (400 naming both), never resolved silently by marketId', () => {
  it('a trade or an order naming a marketId and another market by metric, targetDate, proposal or branch', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const a = await createMetric(app, ws);
    const b = await createMetric(app, ws);
    const books = await marketsOf(app, ws, a.id);
    expect(books.length).toBeGreaterThanOrEqual(2);
    const [m1, m2] = books;
    const who = await trader(app, ws, 1000);
    const trades = async () => Number((await app.deps.ds.query('SELECT count(*)::int AS n FROM trades WHERE agent_id = $1', [who.id]))[0].n);
    const orders = async () => Number((await app.deps.ds.query('SELECT count(*)::int AS n FROM limit_orders WHERE agent_id = $1', [who.id]))[0].n);
    const buy = { direction: 'higher', amount: 5 };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ metricId: b.id }, new RegExp(`marketId ${m1.id} and metricId "${b.id}"`)],
      [{ metricName: b.name }, new RegExp(`marketId ${m1.id} and metricName "${b.name}"`)],
      [{ metricId: a.id, targetDate: m2.targetDate }, new RegExp(`marketId ${m1.id} and targetDate "${m2.targetDate}"`)],
      [{ proposalId: '00000000-0000-4000-8000-000000000000' }, /and proposalId "00000000-0000-4000-8000-000000000000" \(it belongs to no proposal\)/],
      [{ branch: 'declined' }, /and branch "declined"/],
    ];
    for (const [extra, named] of cases) {
      for (const dryRun of [false, true]) {
        const res = await trade(app, ws, who, { marketId: m1.id, ...extra, ...buy, ...(dryRun ? { dryRun } : {}) });
        expect({ extra, dryRun, status: res.status, code: res.body.code }).toEqual({ extra, dryRun, status: 400, code: 'validation_failed' });
        expect(res.body.error).toMatch(named);
      }
      const ord = await app.http.post('/api/predictions/orders').set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id).send({ marketId: m1.id, ...extra, direction: 'higher', limit: 300, shares: 5 });
      expect({ extra, status: ord.status, code: ord.body.code }).toEqual({ extra, status: 400, code: 'validation_failed' });
      expect(ord.body.error).toMatch(named);
    }
    expect(await trades()).toBe(0);
    expect(await orders()).toBe(0);
    // Names that agree with the marketId are fine (metric by id or by name in any case, its own targetDate).
    const same = await trade(app, ws, who, { marketId: m1.id, metricId: a.id, metricName: a.name.toUpperCase(), targetDate: m1.targetDate, ...buy });
    expect(same.status).toBe(200);
    expect(same.body.marketId ?? same.body.market?.id).toBe(m1.id);
    await expectLedgerSound(app.deps);
  });
});

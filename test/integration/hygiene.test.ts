import { expectLedgerSound, uniqueName, useTestApp, type TestApp } from '../helpers/harness';
import { buildWorkspace, mint, registerAgent } from '../helpers/factories';

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
    const res = await app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).set('Content-Type', 'application/json').send(raw);
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

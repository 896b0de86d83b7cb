import { buildWorkspace, registerAgent } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';

let app: TestApp;
useTestApp((a) => (app = a));

describe('feedback', () => {
  it('POST stores the report with the caller, workspace and request id; GET is for the platform operator', async () => {
    const ws = await buildWorkspace(app);
    const a = await registerAgent(app);
    const res = await app.http
      .post('/api/feedback')
      .set({ 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id, 'X-Request-Id': 'fb-req-1' })
      .send({ message: '  The fund sentence is unclear  ', context: { code: 'market_unfunded', marketId: 'abc' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ agentId: ws.owner.id, nickname: ws.owner.nickname, workspaceId: ws.id, message: 'The fund sentence is unclear', requestId: 'fb-req-1', context: { code: 'market_unfunded' } });
    const second = await app.http.post('/api/feedback').set('X-Agent-Key', a.key).send({ message: 'second' });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ agentId: a.id, workspaceId: null, context: null });

    for (const bad of [{}, { message: '   ' }, { message: 'x'.repeat(5001) }, { message: 'ok', context: 'text' }, { message: 'ok', context: { big: 'y'.repeat(10_001) } }]) {
      const r = await app.http.post('/api/feedback').set('X-Agent-Key', a.key).send(bad);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    expect((await app.http.post('/api/feedback').send({ message: 'anon' })).status).toBe(401);

    // A key without account:feedback is refused.
    const narrow = await app.http.post(`/api/agents/me/keys`).set('X-Agent-Key', a.key).send({ label: 'ro', scopes: ['account:read'] });
    expect(narrow.status).toBe(201);
    const refused = await app.http.post('/api/feedback').set('X-Agent-Key', narrow.body.apiKey).send({ message: 'nope' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('scope_denied');

    expect((await app.http.get('/api/feedback').set('X-Agent-Key', a.key)).status).toBe(403);
    const third = await app.http.post('/api/feedback').set('X-Agent-Key', a.key).send({ message: 'third' });
    expect(third.status).toBe(201);
    // Every suite shares the database (the contract fuzz posts reports too): the whole list is
    // checked for order, and pages are walked within one agent's reports.
    const list = await app.http.get('/api/feedback?limit=200').set('X-API-Key', app.masterKey);
    expect(list.status).toBe(200);
    const at = (id: string) => list.body.findIndex((f: any) => f.id === id);
    expect(at(third.body.id)).toBeGreaterThanOrEqual(0);
    expect(at(third.body.id)).toBeLessThan(at(second.body.id));
    expect(at(second.body.id)).toBeLessThan(at(res.body.id));
    expect(Number(list.headers['x-total-count'])).toBeGreaterThanOrEqual(3);
    const newest = await app.http.get(`/api/feedback?agentId=${a.id}&limit=1`).set('X-API-Key', app.masterKey);
    expect(newest.body.map((f: any) => f.id)).toEqual([third.body.id]);
    expect(newest.headers['x-total-count']).toBe('2');
    const older = await app.http.get(`/api/feedback?agentId=${a.id}&limit=1&before=${third.body.id}`).set('X-API-Key', app.masterKey);
    expect(older.body.map((f: any) => f.id)).toEqual([second.body.id]);
    const byAgent = await app.http.get(`/api/feedback?agentId=${a.id}`).set('X-API-Key', app.masterKey);
    expect(byAgent.body.map((f: any) => f.id)).toEqual([third.body.id, second.body.id]);
  });
});

import { buildWorkspace, mint, registerAgent } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf } from '../helpers/markets';

let app: TestApp;
useTestApp((a) => (app = a));

describe('per-metric group permissions on metrics and books', () => {
  it('read: false hides the metric and its books; trade: false refuses trades on that metric only', async () => {
    const ws = await buildWorkspace(app, { public: false });
    const owner = { 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id };
    const open = await createMetric(app, ws, { value: 100 });
    const hidden = await createMetric(app, ws, { value: 200 });
    const readOnly = await createMetric(app, ws, { value: 300 });
    const agent = await registerAgent(app);
    await mint(app, agent.id, 50);
    const g = await app.http
      .post('/api/groups')
      .set(owner)
      .send({ name: 'Analysts', capabilities: ['read', 'trade'], members: [agent.id], metricPermissions: { [hidden.id]: { read: false }, [readOnly.id]: { trade: false } } });
    expect(g.status).toBe(201);
    // Capabilities are the union over groups: the Public group (every member's) must narrow too.
    const groups = await app.http.get('/api/groups').set(owner);
    const pub = groups.body.find((x: any) => x.name === 'Public');
    const narrowed = await app.http.put(`/api/groups/${pub.id}`).set(owner).send({ metricPermissions: { [hidden.id]: { read: false } } });
    expect(narrowed.status).toBe(200);
    const as = { 'X-Agent-Key': agent.key, 'X-Workspace-Id': ws.id };

    const metrics = await app.http.get('/api/metrics').set(as);
    expect(metrics.status).toBe(200);
    const ids = metrics.body.map((m: any) => m.id);
    expect(ids).toEqual(expect.arrayContaining([open.id, readOnly.id]));
    expect(ids).not.toContain(hidden.id);
    expect((await app.http.get(`/api/metrics/${hidden.id}`).set(as)).status).toBe(404);

    const status = await app.http.get('/api/status?markets=1').set(as);
    expect(status.body.metrics.map((m: any) => m.id)).not.toContain(hidden.id);

    const hiddenBooks = await marketsOf(app, ws, hidden.id);
    const listed = await app.http.get('/api/predictions/markets?limit=200').set(as);
    const listedMetricIds = new Set(listed.body.map((m: any) => m.metricId));
    expect(listedMetricIds.has(hidden.id)).toBe(false);
    expect(listedMetricIds.has(open.id)).toBe(true);
    const one = await app.http.get(`/api/predictions/markets/${hiddenBooks[0].id}`).set(as);
    expect(one.status).toBe(404);
    expect(one.body.code).toBe('market_not_found');

    const tradeHidden = await app.http.post('/api/predictions/trade').set(as).send({ marketId: hiddenBooks[0].id, direction: 'higher', amount: 1 });
    expect(tradeHidden.body.code).toBe('market_not_found');
    const [roBook] = await marketsOf(app, ws, readOnly.id);
    const tradeRo = await app.http.post('/api/predictions/trade').set(as).send({ marketId: roBook.id, direction: 'higher', amount: 1 });
    expect(tradeRo.status).toBe(403);
    expect(tradeRo.body).toMatchObject({ code: 'not_authorized', requiredCapabilities: ['trade'] });
    const [okBook] = await marketsOf(app, ws, open.id);
    const tradeOk = await app.http.post('/api/predictions/trade').set(as).send({ marketId: okBook.id, direction: 'higher', amount: 1 });
    expect(tradeOk.status).toBe(200);
    // The owner still sees everything.
    expect((await app.http.get('/api/metrics').set(owner)).body.map((m: any) => m.id)).toContain(hidden.id);
  });
});

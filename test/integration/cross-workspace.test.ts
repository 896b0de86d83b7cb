import '../../src/api/routes';
import { registeredRoutes } from '../../src/api/registry';
import { buildWorkspace, mint, registerAgent } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf } from '../helpers/markets';

/**
 * Scoping (issue 57 item 6): the owner of workspace A, holding every capability there, sends the ids
 * of workspace B's things to every route of the catalog that takes an id in its path, and to the
 * routes that take one in the body. Each answers 404 (or refuses the body's shape, 400
 * validation_failed, before looking anything up); none answers 2xx, 403 or 5xx, nor says anything
 * about B's thing; B's things are unchanged afterwards.
 */
let app: TestApp;
useTestApp((a) => (app = a), { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1' });

const hdr = (key: string, ws: string) => ({ 'X-Agent-Key': key, 'X-Workspace-Id': ws });

describe('ids of another workspace', () => {
  it('are 404 on every route of the catalog that takes one, and change nothing there', async () => {
    const a = await buildWorkspace(app);
    const b = await buildWorkspace(app);
    const ownerB = hdr(b.owner.key, b.id);
    const metric = await createMetric(app, b, { value: 10 });
    const [book] = await marketsOf(app, b, metric.id);
    const bTrader = await registerAgent(app);
    await mint(app, bTrader.id, 100);
    const traders = (await app.http.post('/api/groups').set(ownerB).send({ name: 'Traders', capabilities: ['read', 'trade'], members: [bTrader.id] }).expect(201)).body;
    const proposal = (await app.http.post('/api/proposals').set(ownerB).send({ title: 'B only', liquidity: 1 }).expect(200)).body;
    const source = (await app.http.post('/api/sources').set(ownerB).send({ name: 'B notes', type: 'text', content: 'b' }).expect(201)).body;
    const order = await app.http.post('/api/predictions/orders').set(hdr(bTrader.key, b.id)).set('Idempotency-Key', 'b-order').send({ marketId: book.id, direction: 'higher', limit: 1, shares: 1 });
    expect([200, 201]).toContain(order.status);
    const hook = (await app.http.post('/api/hooks').set(ownerB).send({ url: 'http://127.0.0.1:9/hook', events: ['market:created'] }).expect(201)).body;
    const ids: Record<string, string> = { metric: metric.id, market: book.id, proposal: proposal.id, source: source.id, group: traders.id, order: order.body.id, hook: hook.id };

    // A's owner: every capability in A; the path names B's thing.
    const asA = hdr(a.owner.key, a.id);
    const skip = (path: string) => path.startsWith('/agents/') || path.startsWith('/guides/') || path.startsWith('/seasons/') || path.startsWith('/onboard/') || path.startsWith('/marketplace/') || path.startsWith('/workspaces/');
    const routes = registeredRoutes().filter((r) => r.path.includes(':') && !skip(r.path));
    expect(routes.length).toBeGreaterThan(40);
    const bodies: Record<string, unknown> = {
      'POST /predictions/markets/:id/trade': { side: 'higher', credits: 1 },
      'POST /predictions/markets/:id/fund': { amount: 1 },
      'POST /predictions/markets/:id/void': { reason: 'not yours' },
      'PUT /metrics/:id': { name: 'taken over' },
      'POST /metrics/:id/settle': { value: 1, reason: 'not yours' },
      'POST /metrics/:id/logs/backfill': { readings: [{ at: '2020-01-01T00:00:00Z', value: 1 }] },
      'PUT /groups/:id': { name: 'Taken' },
      'POST /groups/:id/members': { agentId: a.owner.id },
      'POST /proposals/:id/comments': { body: 'hello' },
      'POST /proposals/:id/decline': {},
      'POST /proposals/:id/approve': {},
      'POST /proposals/:id/withdraw': {},
      'PUT /sources/:id': { name: 'taken' },
      'PATCH /hooks/:id': { description: 'taken' },
      'POST /hooks/:id/replay': { after: '0' },
    };
    const seen: string[] = [];
    for (const r of routes) {
      for (const [kind, id] of Object.entries(ids)) {
        const path = `/api${r.path}`.replace(/:(\w+)/g, (_m, name: string) => (name === 'id' ? id : name === 'agentId' ? b.owner.id : '1'));
        const key = `${r.method} ${r.path}`;
        const req = (app.http as any)[r.method.toLowerCase()](path).set(asA);
        const res = r.method === 'GET' || r.method === 'DELETE' ? await req : await req.send(bodies[key] ?? {});
        const ok = res.status === 404 || (res.status === 400 && res.body.code === 'validation_failed');
        if (!ok) seen.push(`${key} with B's ${kind}: ${res.status} ${res.body?.code ?? ''}`);
      }
    }
    expect(seen).toEqual([]);

    // Ids in the body.
    const inBody: Array<[string, string, unknown]> = [
      ['post', '/api/predictions/markets/refresh', { force: true, metricId: metric.id }],
      ['post', '/api/predictions/markets', { metricId: metric.id, targetDate: '2031-01' }],
      ['post', '/api/predictions/trade', { marketId: book.id, direction: 'higher', amount: 1 }],
      ['post', '/api/predictions/trade', { metricId: metric.id, targetDate: book.targetDate, direction: 'higher', amount: 1 }],
      ['post', '/api/predictions/orders', { marketId: book.id, direction: 'higher', limit: 1, shares: 1 }],
    ];
    for (const [method, path, body] of inBody) {
      const res = await (app.http as any)[method](path).set(asA).send(body);
      expect({ path, body, status: res.status }).toEqual({ path, body, status: 404 });
    }
    // An outsider's feedback naming B (private) is refused, not stored under it.
    const fb = await app.http.post('/api/feedback').set(hdr(a.owner.key, b.id)).send({ message: 'filed under B?' });
    expect(fb.status).toBe(403);
    const [{ n }] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM feedback WHERE workspace_id = $1`, [b.id]);
    expect(n).toBe(0);
    expect((await app.http.post('/api/feedback').set(hdr(a.owner.key, a.id)).send({ message: 'filed under A' })).status).toBe(201);

    // B's things are as they were.
    expect((await app.http.get(`/api/metrics/${metric.id}`).set(ownerB).expect(200)).body.name).toBe(metric.name);
    expect((await app.http.get(`/api/predictions/markets/${book.id}`).set(ownerB).expect(200)).body.status).toBe('open');
    expect((await app.http.get(`/api/proposals/${proposal.id}`).set(ownerB).expect(200)).body.status).toBe('pending');
    expect((await app.http.get(`/api/sources/${source.id}`).set(ownerB).expect(200)).body.name).toBe('B notes');
    const group = (await app.http.get(`/api/groups/${traders.id}`).set(ownerB).expect(200)).body;
    expect(group.name).toBe('Traders');
    expect(group.members.map((m: any) => m.id)).toEqual([bTrader.id]);
    expect((await app.http.get(`/api/predictions/orders/${order.body.id}`).set(hdr(bTrader.key, b.id)).expect(200)).body.status).toBe('open');
    expect((await app.http.get(`/api/hooks/${hook.id}`).set(ownerB).expect(200)).body.description ?? '').not.toBe('taken');
    await expectLedgerSound(app.deps);
  });
});

import request from 'supertest';
import type { AddressInfo } from 'node:net';
import { seedDemo } from '../../scripts/demo';
import { registeredRoutes } from '../../src/api/registry';
import { buildWorkspace, joinWorkspace, registerAgent } from '../helpers/factories';
import { createMetric, marketsOf, trader } from '../helpers/markets';
import { uniqueName, useTestApp, type TestApp } from '../helpers/harness';

/**
 * Issue 56: every refusal under /api in one shape ({error, code, doc_url}: unknown paths, wrong
 * methods, the account system's refusals), and the routes a newcomer looks for first (GET
 * /workspaces, GET /health without credentials, a truthful /public-config).
 */
let app: TestApp;
useTestApp((a) => (app = a));

function expectErrorShape(res: request.Response, where: string): void {
  expect({ where, status: res.status, type: res.type }).toEqual({ where, status: res.status, type: 'application/json' });
  expect(res.body).toEqual(expect.objectContaining({ error: expect.any(String), code: expect.any(String), doc_url: expect.stringMatching(/^\/api\/guides\/api-reference#error-/) }));
  expect(res.body.error.length).toBeGreaterThan(10);
}

describe('every refusal under /api is {error, code, doc_url}', () => {
  it('an unknown path: 404 route_not_found', async () => {
    for (const [method, path] of [['get', '/api/nope'], ['post', '/api/nope/deeper'], ['delete', '/api/agents/x/y/z']] as const) {
      const res = await app.http[method](path);
      expect(res.status).toBe(404);
      expectErrorShape(res, `${method} ${path}`);
      expect(res.body.code).toBe('route_not_found');
    }
  });

  it('a wrong method: 405 method_not_allowed with Allow, in the body too', async () => {
    const res = await app.http.put('/api/workspaces').send({});
    expect(res.status).toBe(405);
    expectErrorShape(res, 'PUT /api/workspaces');
    expect(res.body.code).toBe('method_not_allowed');
    const allow = res.headers.allow.split(/,\s*/);
    expect(allow).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(res.body.allow).toEqual(allow);
    expect(res.body.error).toContain('PUT is not served at /api/workspaces');
    const help = await app.http.delete('/api/help');
    expect(help.status).toBe(405);
    expectErrorShape(help, 'DELETE /api/help');
    expect(help.headers.allow).toContain('GET');
  });

  it("the account system's refusals: wrong password, short password, unknown path (a taken email answers as a new one)", async () => {
    const email = `${uniqueName('p')}@example.com`;
    const browser = request.agent(app.server);
    const up = await browser.post('/api/auth/sign-up/email').send({ email, password: 'long-enough-secret', name: 'P' });
    expect(up.status).toBe(200);
    const wrong = await browser.post('/api/auth/sign-in/email').send({ email, password: 'not-the-password' });
    expect(wrong.status).toBe(401);
    expectErrorShape(wrong, 'sign-in wrong password');
    expect(wrong.body).toMatchObject({ code: 'account_refused', reason: 'INVALID_EMAIL_OR_PASSWORD' });
    expect(wrong.body.message).toBeUndefined();
    const short = await browser.post('/api/auth/sign-up/email').send({ email: `${uniqueName('q')}@example.com`, password: 'short', name: 'Q' });
    expect(short.status).toBe(400);
    expectErrorShape(short, 'sign-up short password');
    expect(short.body.reason).toBe('PASSWORD_TOO_SHORT');
    // A taken email is no refusal (issue 55): sign-up answers as it does for a new one, so it reveals nothing.
    const taken = await browser.post('/api/auth/sign-up/email').send({ email, password: 'long-enough-secret', name: 'P' });
    expect([taken.status, Object.keys(taken.body).sort()]).toEqual([up.status, Object.keys(up.body).sort()]);
    const unknown = await browser.post('/api/auth/no-such-thing').send({});
    expect(unknown.status).toBe(404);
    expectErrorShape(unknown, 'unknown account path');
  });

  it('every registered route, called with no credentials and an empty body, refuses (if it does) in the shape', async () => {
    const seen: string[] = [];
    for (const r of registeredRoutes()) {
      if (r.path.includes('stream')) continue; // long-lived answers
      const path = `/api${r.path.replace(/:[A-Za-z]+/g, 'x')}`;
      // No cookie jar: a cleared cookie from one answer (sign-out) must not ride on the next call.
      const call = request(app.server)[r.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path);
      const res = r.method === 'GET' ? await call : await call.send({});
      if (res.status < 400) continue;
      expectErrorShape(res, `${r.method} ${path}`);
      seen.push(`${res.status}`);
    }
    expect(seen.length).toBeGreaterThan(50);
  });
});

describe('the routes a newcomer looks for', () => {
  it('GET /health answers without credentials: Postgres and the queues ready', async () => {
    const res = await request(app.server).get('/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', postgres: { ok: true }, queues: { ok: true, backend: app.deps.hub.backendKind } });
  });

  it("GET /workspaces lists the caller's workspaces with its role and their visibility", async () => {
    const me = await registerAgent(app);
    const mine = await buildWorkspace(app, { owner: me, public: false });
    const other = await buildWorkspace(app, { public: true });
    await joinWorkspace(app, other, me);
    await buildWorkspace(app, { public: true }); // not joined: not listed
    const res = await app.http.get('/api/workspaces').set('X-Agent-Key', me.key).expect(200);
    expect(res.body).toEqual([
      { id: mine.id, name: expect.any(String), slug: mine.slug, role: 'owner', visibility: 'private' },
      { id: other.id, name: expect.any(String), slug: other.slug, role: 'member', visibility: 'public' },
    ]);
    const anonymous = await request(app.server).get('/api/workspaces');
    expect(anonymous.status).toBe(401);
  });

  it('GET /public-config says deposits are off when no chain is configured', async () => {
    const res = await app.http.get('/api/public-config').expect(200);
    expect(res.body.usdcSettlementEnabled).toBe(false);
  });

  it('npm run demo seeds a public workspace with books and a funded participant whose key works', async () => {
    const { port } = app.server.address() as AddressInfo;
    const demo = await seedDemo(`http://127.0.0.1:${port}/api`, app.masterKey);
    expect(demo.markets).toBeGreaterThan(2);
    expect(demo.trader.balance).toBe(990); // 1,000 from the owner, 10 traded
    const mine = await request(app.server).get('/api/workspaces').set('X-Agent-Key', demo.trader.apiKey).expect(200);
    expect(mine.body).toEqual([expect.objectContaining({ id: demo.workspace.id, role: 'member', visibility: 'public' })]);
    const positions = await request(app.server).get('/api/agents/me/positions').set({ 'X-Agent-Key': demo.trader.apiKey, 'X-Workspace-Id': demo.workspace.slug });
    expect(positions.status).toBe(200);
  });

  it('a second paste of a registration answers 409 saying the key is not shown again and how to mint one', async () => {
    const body = { agentId: uniqueName('paste'), nickname: undefined as string | undefined, bio: 'pasted twice' };
    body.nickname = body.agentId;
    const first = await request(app.server).post('/api/agents/register').send(body).expect(201);
    const again = await request(app.server).post('/api/agents/register').send(body);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'nickname_taken', agentId: first.body.agentId });
    expect(again.body.error).toContain('never shown again');
    expect(again.body.error).toContain(`POST /api/agents/${first.body.agentId}/keys`);
    // The way out it names works: the first key mints another.
    const minted = await request(app.server).post(`/api/agents/${first.body.agentId}/keys`).set('X-Agent-Key', first.body.apiKey).send({ label: 'again' });
    expect(minted.status).toBe(201);
  });

  it('an Idempotency-Key reused on another endpoint is refused naming the endpoint, not only the body', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 500 });
    const [book] = await marketsOf(app, ws, metric.id);
    const t = await trader(app, ws, 100);
    const headers = { 'X-Agent-Key': t.key, 'X-Workspace-Id': ws.id, 'Idempotency-Key': uniqueName('idem') };
    await app.http.post('/api/predictions/trade').set(headers).send({ marketId: book.id, direction: 'higher', amount: 1 }).expect(200);
    // The same trade in the condensed form, on its own endpoint.
    const other = await app.http.post(`/api/predictions/markets/${book.id}/trade`).set(headers).send({ side: 'higher', credits: 1 });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('idempotency_key_reuse');
    expect(other.body.error).toContain('another endpoint');
  });
});

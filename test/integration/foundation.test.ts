import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import request from 'supertest';
import { registeredRoutes } from '../../src/api/registry';
import { checkProcessors } from '../../workers';
import { buildWorkspace, registerAgent } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';

let app: TestApp;
useTestApp((a) => (app = a));

describe('malformed requests always get a 4xx with a sentence, never a 500', () => {
  const big = JSON.stringify({ name: 'x'.repeat(1_100_000) });
  const cases: Array<[string, string, string, string | undefined, Record<string, string>?]> = [
    ['truncated JSON', 'POST', '/api/agents/register', '{"name": "abc"'],
    ['JSON with a trailing comma', 'POST', '/api/agents/register', '{"name": "abc",}'],
    ['a bare string body', 'POST', '/api/agents/register', '"hello"'],
    ['an array body', 'POST', '/api/agents/register', '[1,2,3]'],
    ['a number body', 'POST', '/api/agents/register', '42'],
    ['null body', 'POST', '/api/agents/register', 'null'],
    ['name of the wrong type', 'POST', '/api/agents/register', '{"name": 12345}'],
    ['missing every name field', 'POST', '/api/agents/register', '{"operator": "a@b.c"}'],
    ['bio over 500 characters', 'POST', '/api/agents/register', JSON.stringify({ name: 'okname', bio: 'b'.repeat(501) })],
    ['a bad source slug', 'POST', '/api/agents/register', JSON.stringify({ name: 'okname', source: 'Not Valid' })],
    ['a body over 1 MB', 'POST', '/api/agents/register', big],
    ['form-encoded instead of JSON', 'POST', '/api/agents/register', 'name=abc', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['text/plain body', 'POST', '/api/agents/register', 'name', { 'content-type': 'text/plain' }],
    ['a non-finite number (1e999)', 'POST', '/api/workspaces', '{"name": "w", "defaultLiquidityCredits": 1e999}', { auth: '1' }],
    ['a negative liquidity', 'POST', '/api/workspaces', '{"name": "w", "defaultLiquidityCredits": -5}', { auth: '1' }],
    ['a blank workspace name', 'POST', '/api/workspaces', '{"name": "   "}', { auth: '1' }],
    ['a bad slug', 'POST', '/api/workspaces', '{"name": "w", "slug": "Bad Slug!"}', { auth: '1' }],
    ['public as a string', 'POST', '/api/workspaces', '{"name": "w", "public": "yes"}', { auth: '1' }],
    ['credit amount of zero', 'POST', '/api/agents/platform/credit', '{"amount": 0}', { master: '1' }],
    ['credit amount as a string', 'POST', '/api/agents/platform/credit', '{"amount": "10"}', { master: '1' }],
    ['credit amount too large', 'POST', '/api/agents/platform/credit', '{"amount": 1e13}', { master: '1' }],
    ['credit to an unknown participant', 'POST', '/api/agents/nobody-here/credit', '{"amount": 1}', { master: '1' }],
    ['help with an unknown section', 'GET', '/api/help?section=nope', undefined],
    ['an unknown route', 'GET', '/api/no/such/route', undefined],
    ['an unknown workspace header', 'GET', '/api/workspaces/current', undefined, { 'x-workspace-id': 'no-such-workspace', auth: '1' }],
    ['a market limit of 0', 'GET', '/api/predictions/markets?limit=0', undefined, { auth: '1', ws: '1' }],
    ['a market id that is not a UUID', 'GET', '/api/predictions/markets/not-a-uuid', undefined, { auth: '1', ws: '1' }],
    ['a trade with no market', 'POST', '/api/predictions/trade', '{"direction": "higher", "amount": 1}', { auth: '1', ws: '1' }],
    ['a trade with a NaN-ish amount', 'POST', '/api/predictions/trade', '{"marketId": "00000000-0000-4000-8000-000000000000", "direction": "higher", "amount": "NaN"}', { auth: '1', ws: '1' }],
    ['an empty X-Agent-Key', 'GET', '/api/agents/me', undefined, { 'x-agent-key': '' }],
  ];

  it(`has at least 25 cases (${cases.length})`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases)('%s', async (_label, method, path, body, headers = {}) => {
    const owner = await registerAgent(app);
    const ws = headers.ws ? await buildWorkspace(app, { owner }) : null;
    let req = method === 'GET' ? app.http.get(path) : app.http.post(path);
    const { auth, master, ws: _ws, ...raw } = headers;
    if (auth) req = req.set('X-Agent-Key', owner.key);
    if (master) req = req.set('X-API-Key', app.masterKey);
    if (ws) req = req.set('X-Workspace-Id', ws.id);
    for (const [k, v] of Object.entries(raw)) req = req.set(k, v);
    if (body !== undefined) {
      if (!raw['content-type']) req = req.set('content-type', 'application/json');
      req = req.send(body);
    }
    const res = await req;
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers['content-type']).toMatch(/json/);
    expect(typeof res.body.error).toBe('string');
    expect(res.body.error.length).toBeGreaterThan(10);
    expect(typeof res.body.code).toBe('string');
    expect(res.body.doc_url).toContain(`#error-${res.body.code}`);
  });
});

describe('the help catalog', () => {
  it('lists every registered route and nothing else, each with an auth label, capability or scope', async () => {
    const res = await app.http.get('/api/help');
    expect(res.status).toBe(200);
    const listed = res.body.endpoints.map((e: any) => `${e.method} ${e.path}`).sort();
    const registered = registeredRoutes()
      .map((r) => `${r.method} /api${r.path.replace(/:([A-Za-z]+)/g, '{$1}')}`)
      .sort();
    expect(listed).toEqual(registered);
    expect(listed.length).toBeGreaterThan(60);
    for (const e of res.body.endpoints) {
      expect(e.auth).toEqual(expect.any(String));
      expect(e.description.length).toBeGreaterThan(5);
      if (e.auth !== '-') expect(e.capability !== null || e.scope !== null || ['identity', 'optional', 'platform admin', 'self/admin'].includes(e.auth)).toBe(true);
    }
    // Each listed endpoint is really served: none answers route_not_found (whatever else it says).
    for (const e of res.body.endpoints) {
      const path = e.path.replace(/\{[A-Za-z]+\}/g, '00000000-0000-4000-8000-000000000000');
      // No cookie jar: the account system's sign-out clears a cookie that must not ride on the next call.
      const r = await request(app.server)[e.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path).set('content-type', 'application/json').send(e.method === 'GET' ? undefined : '{}');
      expect({ route: `${e.method} ${e.path}`, code: r.body?.code }).not.toEqual({ route: `${e.method} ${e.path}`, code: 'route_not_found' });
      // 503 only where the spec says so: no chain configured in this run (spec §7).
      if (r.status === 503) expect({ route: `${e.method} ${e.path}`, code: r.body?.code }).toEqual({ route: `${e.method} ${e.path}`, code: 'treasury_not_configured' });
      else expect(r.status).toBeLessThan(500);
    }
    expect(res.body.primer.length).toBeGreaterThan(0);
    expect(res.body.authentication['public-read']).toEqual(expect.any(String));
  });

  it('filters by section and by terms, which combine', async () => {
    const bySection = await app.http.get('/api/help?section=predictions');
    expect(bySection.body).toMatchObject({ app: expect.any(String), filter: { section: 'predictions', q: null }, hint: expect.any(String) });
    expect(bySection.body.matched).toBe(bySection.body.endpoints.length);
    expect(bySection.body.of).toBeGreaterThan(bySection.body.matched);
    expect(bySection.body.endpoints.every((e: any) => e.path.startsWith('/api/predictions'))).toBe(true);
    expect(bySection.body.primer).toBeUndefined();
    const both = await app.http.get('/api/help?section=predictions&q=trade%20condensed');
    expect(both.body.endpoints.map((e: any) => `${e.method} ${e.path}`)).toEqual(['POST /api/predictions/markets/{id}/trade']);
    const none = await app.http.get('/api/help?q=zzzz-nothing');
    expect(none.body.matched).toBe(0);
    const bad = await app.http.get('/api/help?section=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.sections).toContain('predictions');
  });

  it('serves the guides, the api reference with every error code, and public-config without secrets', async () => {
    const guides = await app.http.get('/api/guides');
    expect(guides.body.map((g: any) => g.id)).toEqual(expect.arrayContaining(['overview', 'api-reference', 'time-preference']));
    const ref = await app.http.get('/api/guides/api-reference');
    expect(ref.text).toContain('error-price_moved');
    const tp = await app.http.get('/api/guides/time-preference');
    expect(tp.text).toContain('2027-05');
    const cfg = await app.http.get('/api/public-config');
    expect(Object.keys(cfg.body).sort()).toEqual(['homeFloor', 'instanceName', 'managed', 'otto', 'preview', 'store', 'usdcSettlementEnabled']);
  });
});

describe('workspace selection', () => {
  it('by id, by slug, by the caller’s highest-priority membership; anonymous reads only public workspaces', async () => {
    const owner = await registerAgent(app);
    const priv = await buildWorkspace(app, { owner, slug: `priv-${randomBytes(3).toString('hex')}` });
    const pub = await buildWorkspace(app, { public: true });
    const byId = await app.http.get('/api/workspaces/current').set('X-Agent-Key', owner.key).set('X-Workspace-Id', priv.id);
    const bySlug = await app.http.get('/api/workspaces/current').set('X-Agent-Key', owner.key).set('X-Workspace-Id', priv.slug.toUpperCase());
    const byDefault = await app.http.get('/api/workspaces/current').set('X-Agent-Key', owner.key);
    expect([byId.body.id, bySlug.body.id, byDefault.body.id]).toEqual([priv.id, priv.id, priv.id]);
    expect(byId.body.capabilities.sort()).toEqual(['manage', 'manage_workspace', 'read', 'trade']);
    const anonPub = await app.http.get('/api/workspaces/current').set('X-Workspace-Id', pub.id);
    expect(anonPub.status).toBe(200);
    expect(anonPub.body.capabilities).toEqual(['read']);
    const anonPriv = await app.http.get('/api/workspaces/current').set('X-Workspace-Id', priv.id);
    expect(anonPriv.status).toBe(401);
    const stranger = await registerAgent(app);
    const denied = await app.http.post('/api/metrics').set('X-Agent-Key', stranger.key).set('X-Workspace-Id', pub.id).send({ name: 'm' });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'not_authorized', requiredCapabilities: ['manage'] });
  });
});

describe('start-up and shutdown', () => {
  it('start-up refuses a declared job without a processor, and a processor without a declared job', () => {
    expect(() => checkProcessors({ trade: { trade: async () => 1, resolve: async () => 1, settle: async () => 1 }, horizons: {}, outbox: {} })).toThrow(
      /horizons\.refresh.*outbox\.relay/s,
    );
    expect(() =>
      checkProcessors({
        trade: { trade: async () => 1, resolve: async () => 1, settle: async () => 1, extra: async () => 1 },
        horizons: { refresh: async () => 1, resolveDue: async () => 1, purgeRequests: async () => 1 },
        outbox: { relay: async () => 1 },
      }),
    ).toThrow(/trade\.extra/);
  });

  it('npm start serves /api, and SIGTERM drains and exits 0 within 10 s', async () => {
    const port = await new Promise<number>((res) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => res(p));
      });
    });
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: String(port), QUEUE_PREFIX: `t${randomBytes(4).toString('hex')}`, MASTER_API_KEY: 'runtime-test-master-key-0123', LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Errors only (a quiet run logs nothing): shown with a failed exit, so a rare failure says which part failed.
    let said = '';
    for (const s of [child.stdout!, child.stderr!]) s.on('data', (d: Buffer) => (said = (said + d.toString()).slice(-3000)));
    try {
      let up = false;
      for (let i = 0; i < 600 && !up; i++) {
        up = await fetch(`http://127.0.0.1:${port}/api/public-config`).then((r) => r.ok, () => false);
        if (!up) await new Promise((r) => setTimeout(r, 100));
      }
      expect(up).toBe(true);
      const started = Date.now();
      const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
      child.kill('SIGTERM');
      const code = await exited;
      expect({ code, said: code === 0 ? '' : said }).toEqual({ code: 0, said: '' });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});

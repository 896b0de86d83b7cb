import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { apiRead, type Visitor } from '../../src/web/api';
import type { AnyRoute } from '../../src/api/registry';
import { getMetrics, getMetricsById } from '../../src/api/routes';
import { DomainError } from '../../src/errors';
import { signUp, type TestPerson } from '../helpers/accounts';
import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric } from '../helpers/markets';
import { connectThroughOAuth, resultBody } from '../helpers/mcp';

/**
 * Issue 58: the API, the pages and the MCP tools act through one in-process caller (callRoute), so
 * the same caller is refused the same way by each: the same code and sentence.
 */
describe('one caller: a page and an MCP tool refuse exactly what the API refuses', () => {
  let app: TestApp;
  let person: TestPerson;
  let outside: TestWorkspace;
  let readers: TestWorkspace;
  let hiddenId: string;
  let client: Client;
  let cookie: string;
  useTestApp((a) => (app = a), { PUBLIC_BASE_URL: 'listening' });

  beforeAll(async () => {
    person = await signUp(app);
    cookie = (person.browser as unknown as { jar: { getCookies(o: object): Array<{ toValueString(): string }> } }).jar
      .getCookies({ domain: '127.0.0.1', path: '/', secure: false, script: false })
      .map((c) => c.toValueString())
      .join('; ');
    // A private workspace the person is no member of, and one where the person's group hides a metric.
    outside = await buildWorkspace(app, { public: false });
    readers = await buildWorkspace(app, { public: false });
    await createMetric(app, readers);
    hiddenId = (await createMetric(app, readers)).id;
    const g = await app.http
      .post('/api/groups')
      .set({ 'X-Agent-Key': readers.owner.key, 'X-Workspace-Id': readers.id })
      .send({ name: 'Readers', capabilities: ['read'], members: [person.agentId], metricPermissions: { [hiddenId]: { read: false } } });
    expect(g.status).toBe(201);
    // The Public group applies to every member too: it hides the metric as well.
    const owner = { 'X-Agent-Key': readers.owner.key, 'X-Workspace-Id': readers.id };
    const pub = (await app.http.get('/api/groups').set(owner)).body.find((x: { name: string }) => x.name === 'Public');
    expect((await app.http.put(`/api/groups/${pub.id}`).set(owner).send({ metricPermissions: { [hiddenId]: { read: false } } })).status).toBe(200);
    ({ client } = await connectThroughOAuth(app, person));
  });
  afterAll(async () => {
    await client?.close();
  });

  const visitor = (workspace: string, headers: Record<string, string>): Visitor => ({ workspace, viewToken: null, headers, ip: '127.0.0.1', request: { counted: false } });

  /** What the page's read (apiRead, which every page calls) throws, as the API's body would carry it. */
  async function pageRefusal(v: Visitor, route: AnyRoute, params: Record<string, string> = {}) {
    try {
      await apiRead(app.deps, v, route, { params });
    } catch (err) {
      if (err instanceof DomainError) return { code: err.code, error: err.message };
      throw err;
    }
    throw new Error(`the page read ${route.method} ${route.path} was not refused`);
  }

  it('missing capability: a workspace the person may not read', async () => {
    const api = await person.browser.get('/api/metrics').set('X-Workspace-Id', outside.id);
    expect(api.status).toBe(403);
    expect(api.body.code).toBe('not_authorized');
    expect(await pageRefusal(visitor(outside.slug, { cookie }), getMetrics)).toEqual({ code: api.body.code, error: api.body.error });
    // The rendered page answers the same status with the same code.
    const page = await person.browser.get(`/w/${outside.slug}`);
    expect(page.status).toBe(api.status);
    expect(page.text).toContain(`data-code="${api.body.code}"`);
    const tool = await client.callTool({ name: 'list_metrics', arguments: { workspace: outside.id } });
    expect(tool.isError).toBe(true);
    expect(resultBody(tool)).toMatchObject({ code: api.body.code, error: api.body.error });
  });

  it('hidden metric: a group that hides one metric from the person', async () => {
    const api = await person.browser.get(`/api/metrics/${hiddenId}`).set('X-Workspace-Id', readers.id);
    expect(api.status).toBeGreaterThanOrEqual(400);
    expect(await pageRefusal(visitor(readers.slug, { cookie }), getMetricsById, { id: hiddenId })).toEqual({ code: api.body.code, error: api.body.error });
    const page = await person.browser.get(`/w/${readers.slug}/metrics/${hiddenId}`);
    expect(page.status).toBe(api.status);
    expect(page.text).toContain(`data-code="${api.body.code}"`);
    const tool = await client.callTool({ name: 'get_metric', arguments: { workspace: readers.id, id: hiddenId } });
    expect(tool.isError).toBe(true);
    expect(resultBody(tool)).toMatchObject({ code: api.body.code, error: api.body.error });
    // The same caller reads the metric it may see, through each door alike.
    const listed = await person.browser.get('/api/metrics').set('X-Workspace-Id', readers.id);
    expect(listed.body.map((m: { id: string }) => m.id)).not.toContain(hiddenId);
    const viaTool = resultBody(await client.callTool({ name: 'list_metrics', arguments: { workspace: readers.id } }));
    expect(viaTool).toEqual(listed.body);
  });

  it('missing scope: a key that holds account:read only', async () => {
    const minted = await person.browser.post('/api/agents/me/keys').send({ scopes: ['account:read'], label: 'narrow' });
    expect(minted.status).toBe(201);
    const key = minted.body.apiKey as string;
    const api = await app.http.get('/api/metrics').set({ 'X-Agent-Key': key, 'X-Workspace-Id': readers.id });
    expect(api.status).toBe(403);
    expect(api.body.code).toBe('scope_denied');
    expect(await pageRefusal(visitor(readers.slug, { 'x-agent-key': key }), getMetrics)).toEqual({ code: api.body.code, error: api.body.error });
    const page = await app.http.get(`/w/${readers.slug}`).set('X-Agent-Key', key);
    expect(page.status).toBe(api.status);
    expect(page.text).toContain(`data-code="${api.body.code}"`);
    await expectLedgerSound(app.deps);
  });
});

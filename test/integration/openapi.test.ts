import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { registeredRoutes } from '../../src/api/registry';
import { errorCodesOf, openApiPath, shortSummary } from '../../src/api/openapi';
import { describeRoute } from '../../src/api/routes/help';
import { contractViolation } from '../helpers/contract';
import { useTestApp, type TestApp } from '../helpers/harness';

let app: TestApp;
useTestApp((a) => (app = a), {}, { workers: false });

describe('GET /api/openapi.json', () => {
  let doc: Record<string, any>;

  beforeAll(async () => {
    const res = await app.http.get('/api/openapi.json').expect(200);
    doc = res.body;
  });

  it('is built once and cacheable: a strong ETag, a public max-age, 304 when the client sends the ETag back (issue 60)', async () => {
    for (const path of ['/api/openapi.json', '/api/help']) {
      const first = await app.http.get(path).expect(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[\w-]{20,}"$/);
      expect(first.headers['cache-control']).toBe('public, max-age=300');
      const again = await app.http.get(path).expect(200);
      expect(again.headers.etag).toBe(etag);
      expect(again.body).toEqual(first.body);
      const cached = await app.http.get(path).set('If-None-Match', `W/${etag}`).expect(304);
      expect(cached.text ?? '').toBe('');
      await app.http.get(path).set('If-None-Match', '"another"').expect(200);
    }
    // A filtered catalog is computed per request and not cached as the whole one.
    const filtered = await app.http.get('/api/help?section=agents').expect(200);
    expect(filtered.headers.etag).toBeUndefined();
  });

  it('passes the OpenAPI 3.1 validator (swagger-parser) with no errors', async () => {
    expect(doc.openapi).toBe('3.1.0');
    // swagger-parser is ESM-only: it runs in its own node process (the same script as npm run openapi:validate).
    const out = execFileSync(process.execPath, [join(__dirname, '..', '..', 'scripts', 'validate-openapi.mjs')], { input: JSON.stringify(doc), encoding: 'utf8' });
    expect(out).toMatch(/^valid: OpenAPI 3\.1\.0/);
  });

  it('documents every registered route, with a success body schema on every route that answers with one', () => {
    const routes = registeredRoutes();
    const missing: string[] = [];
    for (const r of routes) {
      const op = doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()];
      if (!op) missing.push(`${r.method} ${r.path} absent`);
      else if (!r.response && !op.responses['204']) missing.push(`${r.method} ${r.path} declares no response schema`);
    }
    expect(missing).toEqual([]);
    const documented = Object.values(doc.paths).reduce((n: number, p) => n + Object.keys(p as object).length, 0);
    expect(documented).toBe(routes.length);
  });

  it('agrees with GET /api/help: same routes, same auth, same scopes, and the declared error codes', async () => {
    const help = (await app.http.get('/api/help').expect(200)).body;
    expect(help.guides).toBe('/api/guides');
    for (const e of help.endpoints as ReturnType<typeof describeRoute>[]) {
      const op = doc.paths[e.path.replace(/^\/api/, '')][e.method.toLowerCase()];
      expect(op['x-auth']).toEqual({ label: e.auth, capability: e.capability, scope: e.scope });
    }
    const trade = registeredRoutes().find((r) => r.method === 'POST' && r.path === '/predictions/trade')!;
    const op = doc.paths['/predictions/trade'].post;
    expect(op['x-error-codes']).toEqual(errorCodesOf(trade));
    expect(op.responses['409'].description).toContain('price_moved');
    expect(op.responses['503'].headers['Retry-After']).toBeDefined();
    expect(op.security).toEqual([{ agentKey: ['workspace:trade'] }, { apiKey: ['workspace:trade'] }, { session: [] }]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['agentKey', 'apiKey', 'session', 'viewLink']);
  });

  it('the committed client types (examples/api.d.ts, which examples/build-agent.ts compiles against) match the document', () => {
    const root = join(__dirname, '..', '..');
    const out = execFileSync(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'scripts', 'generate-client.ts'), '--check'], { encoding: 'utf8' });
    expect(out).toContain('up to date');
  });

  it('describes requests from the input side of the schemas (coerced query numbers, flags as strings)', () => {
    const status = doc.paths['/status'].get;
    const trends = status.parameters.find((p: { name: string }) => p.name === 'trends');
    expect(trends.schema.enum).toEqual(expect.arrayContaining(['1', 'true']));
    const limit = doc.paths['/predictions/markets'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ type: 'integer', maximum: 200, default: 50 });
    expect(doc.paths['/predictions/markets/{id}'].get.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true });
  });
});

describe('the document says everything (issue 28 item 12)', () => {
  let doc: Record<string, any>;
  beforeAll(async () => {
    doc = (await app.http.get('/api/openapi.json').expect(200)).body;
  });

  it('declares the Idempotency-Key header on every operation that reads it, and on no other', () => {
    const reads = (r: { handler: unknown }) => /\bidempotencyKey\)?\(c\)/.test(String(r.handler));
    const expected = registeredRoutes().filter(reads).map((r) => `${r.method} ${r.path}`).sort();
    const declared: string[] = [];
    for (const r of registeredRoutes()) {
      const op = doc.paths[openApiPath(r.path)][r.method.toLowerCase()];
      const header = (op.parameters as Array<{ name: string; in: string; required: boolean; schema: unknown }>).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      if (header) {
        declared.push(`${r.method} ${r.path}`);
        expect(header).toMatchObject({ required: false, schema: { type: 'string', minLength: 1, maxLength: 200 } });
      }
    }
    expect(declared.sort()).toEqual(expected);
    // The money moves and the trades (spec §4.5, credits guide): seven operations.
    expect(expected).toEqual(
      expect.arrayContaining(['POST /agents/transfer', 'POST /agents/:id/credit', 'POST /agents/:id/spend', 'POST /agents/:id/withdraw', 'POST /predictions/trade', 'POST /predictions/orders']),
    );
  });

  it('describes every tag, and every operation names a described tag', () => {
    const tags = doc.tags as Array<{ name: string; description?: string }>;
    const undescribed = tags.filter((t) => !t.description || t.description.startsWith('Operations under')).map((t) => t.name);
    expect(undescribed).toEqual([]);
    const names = new Set(tags.map((t) => t.name));
    for (const ops of Object.values(doc.paths) as Array<Record<string, { tags: string[] }>>) for (const op of Object.values(ops)) expect(names.has(op.tags[0])).toBe(true);
  });

  it('cuts no summary inside a bracket, and keeps each within 100 characters', () => {
    const balanced = (s: string) => {
      let d = 0;
      for (const ch of s) {
        if ('{[('.includes(ch)) d++;
        if ('}])'.includes(ch)) d--;
        if (d < 0) return false;
      }
      return d === 0;
    };
    const bad: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths) as Array<[string, Record<string, { summary: string }>]>) {
      for (const [method, op] of Object.entries(ops)) if (!balanced(op.summary) || op.summary.length > 100 || op.summary.length === 0) bad.push(`${method} ${path}: ${op.summary}`);
    }
    expect(bad).toEqual([]);
    expect(doc.paths['/agents/{id}/spend'].post.summary).toBe('Spend credits { amount, type: tokens|purchase|betting, reason }');
    expect(shortSummary('Settle { value: 1, reason: two } now; more words here.')).toBe('Settle { value: 1, reason: two } now; more words here');
    const long = shortSummary(`Do it { a: ${'x '.repeat(60)}}: then more.`);
    expect(long.length).toBeLessThanOrEqual(100);
    expect(balanced(long)).toBe(true);
  });
});

describe('the contract check', () => {
  it('fails a success body that does not match its route schema, and an undeclared error code', () => {
    const route = { method: 'GET' as const, path: '/agents/:id/balance' };
    const base = { method: 'GET', path: '/api/agents/me/balance', route, type: 'application/json' };
    expect(contractViolation({ ...base, status: 200, body: { agentId: 'a', balance: 3 } })).toBeNull();
    expect(contractViolation({ ...base, status: 200, body: { agentId: 'a', balance: '3' } })).toMatch(/does not match/);
    expect(contractViolation({ ...base, status: 200, body: { agentId: 'a', balance: 3, extra: 1 } })).toMatch(/does not match/);
    const refusal = (code: string) => ({ error: 'x', code, doc_url: `/api/guides/api-reference#error-${code}` });
    expect(contractViolation({ ...base, status: 404, body: refusal('not_found') })).toBeNull();
    expect(contractViolation({ ...base, status: 400, body: refusal('price_moved') })).toMatch(/not among the route's declared errors/);
    expect(contractViolation({ ...base, status: 400, body: { error: 'x' } })).toMatch(/Error schema/);
    expect(contractViolation({ ...base, status: 201, body: { agentId: 'a', balance: 3 } })).toMatch(/not documented/);
  });
});

describe('guides (spec §4.1)', () => {
  const SECTIONS = [
    'agent-api', 'agent-telemetry', 'api-reference', 'auth-and-keys', 'build-agent', 'compatibility', 'connect', 'creating', 'credits', 'feedback', 'formulas',
    'get-paid', 'limit-orders', 'markets', 'metric-design', 'onboarding', 'overview', 'proposals', 'recipes', 'seasons', 'sources', 'time-preference',
  ];

  it('indexes every section with { id, title, description, path, category, order } in known categories', async () => {
    const index = (await app.http.get('/api/guides').expect(200)).body as Array<{ id: string; path: string; category: string; order: number }>;
    expect(index.map((g) => g.id).sort()).toEqual(SECTIONS);
    const categories = (await app.http.get('/api/guides/_categories').expect(200)).body as Array<{ id: string }>;
    for (const g of index) {
      expect(g.path).toBe(`/api/guides/${g.id}`);
      expect(categories.map((c) => c.id)).toContain(g.category);
    }
    expect(index.map((g) => g.order)).toEqual(index.map((_, i) => i + 1));
  });

  it('answers every section with real Markdown whose guide links all resolve', async () => {
    const ids = new Set(SECTIONS);
    const problems: string[] = [];
    for (const id of SECTIONS) {
      const res = await app.http.get(`/api/guides/${id}`).expect(200);
      expect(res.headers['content-type']).toMatch(/text\/markdown/);
      const text = res.text;
      if (!/^# \S/.test(text)) problems.push(`${id}: no title`);
      // Not a stub (the index's one-line fallback): concepts, an example, the codes.
      if (text.length < 700 || !text.includes('```')) problems.push(`${id}: ${text.length} characters, no example`);
      if (text.includes('{{example:')) problems.push(`${id}: an example is missing`);
      for (const [, target] of text.matchAll(/\/api\/guides\/([a-z-]+)/g)) if (!ids.has(target)) problems.push(`${id} links to ${target}`);
    }
    expect(problems).toEqual([]);
    await app.http.get('/api/guides/nope').expect(404);
  });

  it('build-agent and recipes carry the compiled examples, and the help primer links the guides', async () => {
    expect((await app.http.get('/api/guides/build-agent')).text).toContain("operations['postPredictionsTrade']");
    expect((await app.http.get('/api/guides/recipes')).text).toContain('export async function tradeProposals');
    const help = (await app.http.get('/api/help').expect(200)).body;
    expect(help.primer.join(' ')).toContain('/api/guides');
  });
});

describe('superseded parameters', () => {
  it('answer with a Deprecation header and a warnings entry, and are marked deprecated in the document', async () => {
    const res = await app.http.post('/api/agents/register').send({ name: `legacy-${Date.now().toString(36)}`, operator: 'ops@example.com' }).expect(201);
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.link).toContain('/api/guides/compatibility');
    expect(res.body.warnings).toEqual([expect.stringContaining("'name' is superseded"), expect.stringContaining("'operator' is superseded")]);
    const plain = await app.http.post('/api/agents/register').send({ agentId: `fresh-${Date.now().toString(36)}` }).expect(201);
    expect(plain.headers.deprecation).toBeUndefined();
    expect(plain.body.warnings).toBeUndefined();
    const doc = (await app.http.get('/api/openapi.json')).body;
    const body = doc.paths['/agents/register'].post.requestBody.content['application/json'].schema;
    expect(body.properties.name.deprecated).toBe(true);
    expect(doc.paths['/predictions/trade'].post.requestBody.content['application/json'].schema.properties.value.deprecated).toBe(true);
    expect(doc.paths['/predictions/markets/{id}/trade'].post.deprecated).toBe(true);
  });
});

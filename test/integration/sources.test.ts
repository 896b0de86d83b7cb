import { buildWorkspace, joinWorkspace, registerAgent } from '../helpers/factories';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGithubFixture, type GithubFixture, type RawAnswer } from '../helpers/githubFixture';
import { useTestApp, type TestApp } from '../helpers/harness';

let app: TestApp;
let gh: GithubFixture;
// The fixture listens on loopback: SOURCE_ALLOW_PRIVATE lets the bridge reach it (off by default; a test below turns it off).
const env: Record<string, string> = { SOURCE_TOKEN_KEY: 'test-source-token-key-0123456789', SOURCE_ALLOW_PRIVATE: '1', SOURCE_FETCH_TIMEOUT_MS: '800', SOURCE_MAX_FILE_BYTES: '2097152' };
const TOKEN = 'ghp_fixtureSecretToken123';

beforeAll(async () => {
  gh = await startGithubFixture({
    'acme/handbook': {
      refs: {
        main: {
          'README.md': { content: Buffer.from('# Handbook\n\nRevenue is counted at invoice.\n') },
          'docs/metrics.md': { content: Buffer.from('## Metrics\n') },
          'docs/deep/notes.txt': { content: Buffer.from('deep') },
          'logo.png': { content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]) },
          'big.csv': { content: Buffer.from(''), size: 5_000_000 },
          'medium.txt': { content: Buffer.alloc(300_000, 'a') },
          'large.txt': { content: Buffer.alloc(1_500_000, 'b') },
        },
        v1: { 'README.md': { content: Buffer.from('# Old handbook\n') } },
      },
    },
    'acme/secret-plans': { token: TOKEN, refs: { HEAD: { 'plan.md': { content: Buffer.from('ship in Q3') } } } },
  });
  env.GITHUB_API_URL = `${gh.url}/`;
});
// Registered after the fixture's beforeAll: the app starts with its URL in env.
useTestApp((a) => (app = a), env);
afterAll(async () => gh?.close());

const hdr = (key: string | null, wsId: string) => (key ? { 'X-Agent-Key': key, 'X-Workspace-Id': wsId } : { 'X-Workspace-Id': wsId });

describe('sources', () => {
  it('text sources: created by admins, read with an identity, at most 1 MB', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const owner = hdr(ws.owner.key, ws.id);
    const created = await app.http.post('/api/sources').set(owner).send({ name: 'Metric definitions', type: 'text', content: '# Revenue\nInvoiced, net of refunds.', description: 'How we count' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Metric definitions', type: 'text', bytes: 35, repository: null, hasToken: false });
    const member = await registerAgent(app);
    await joinWorkspace(app, ws, member);
    const text = await app.http.get(`/api/sources/${created.body.id}/text`).set(hdr(member.key, ws.id));
    expect(text.status).toBe(200);
    expect(text.body).toEqual({ sourceId: created.body.id, name: 'Metric definitions', bytes: 35, content: '# Revenue\nInvoiced, net of refunds.' });
    // Always an identity, even on a public workspace.
    expect((await app.http.get('/api/sources').set(hdr(null, ws.id))).status).toBe(401);
    expect((await app.http.get(`/api/sources/${created.body.id}/text`).set(hdr(null, ws.id))).status).toBe(401);
    // Only admins create, change and delete.
    expect((await app.http.post('/api/sources').set(hdr(member.key, ws.id)).send({ name: 'x', type: 'text', content: 'x' })).status).toBe(403);
    expect((await app.http.put(`/api/sources/${created.body.id}`).set(hdr(member.key, ws.id)).send({ name: 'y' })).status).toBe(403);
    expect((await app.http.delete(`/api/sources/${created.body.id}`).set(hdr(member.key, ws.id))).status).toBe(403);

    const tooBig = await app.http.post('/api/sources').set(owner).send({ name: 'huge', type: 'text', content: 'é'.repeat(524_289) });
    expect([400, 413]).toContain(tooBig.status);
    expect((await app.http.post('/api/sources').set(owner).send({ name: 'no content', type: 'text' })).status).toBe(400);
    expect((await app.http.post('/api/sources').set(owner).send({ name: 'mixed', type: 'text', content: 'x', repository: 'a/b' })).status).toBe(400);

    const edited = await app.http.put(`/api/sources/${created.body.id}`).set(owner).send({ content: 'v2', name: 'Definitions' });
    expect(edited.body).toMatchObject({ name: 'Definitions', bytes: 2 });
    expect((await app.http.put(`/api/sources/${created.body.id}`).set(owner).send({ token: 'x' })).status).toBe(400);
    expect((await app.http.delete(`/api/sources/${created.body.id}`).set(owner)).status).toBe(204);
    expect((await app.http.get(`/api/sources/${created.body.id}`).set(owner)).status).toBe(404);
  });

  it('sourcePermissions: read false hides a source from a group', async () => {
    const ws = await buildWorkspace(app, { public: false });
    const owner = hdr(ws.owner.key, ws.id);
    const open = (await app.http.post('/api/sources').set(owner).send({ name: 'open', type: 'text', content: 'a' })).body;
    const hidden = (await app.http.post('/api/sources').set(owner).send({ name: 'hidden', type: 'text', content: 'b' })).body;
    const analyst = await registerAgent(app);
    const g = await app.http.post('/api/groups').set(owner).send({ name: 'Analysts', capabilities: ['read'], members: [analyst.id], sourcePermissions: { [hidden.id]: { read: false } } });
    expect(g.status).toBe(201);
    const pub = (await app.http.get('/api/groups').set(owner)).body.find((x: any) => x.name === 'Public');
    await app.http.put(`/api/groups/${pub.id}`).set(owner).send({ sourcePermissions: { [hidden.id]: { read: false } } }).expect(200);

    const as = hdr(analyst.key, ws.id);
    const list = await app.http.get('/api/sources').set(as);
    expect(list.body.map((s: any) => s.id)).toEqual([open.id]);
    for (const p of ['', '/text']) expect((await app.http.get(`/api/sources/${hidden.id}${p}`).set(as)).status).toBe(404);
    expect((await app.http.get(`/api/sources/${open.id}/text`).set(as)).body.content).toBe('a');
    expect((await app.http.get('/api/sources').set(owner)).body.map((s: any) => s.id)).toEqual([open.id, hidden.id]);
    const outsider = await registerAgent(app);
    expect((await app.http.get('/api/sources').set(hdr(outsider.key, ws.id))).status).toBe(403);
  });

  it('sourcePermissions precedence: own groups decide, the Public group only for a member none of whose groups carries read', async () => {
    const ws = await buildWorkspace(app, { public: false });
    const owner = hdr(ws.owner.key, ws.id);
    const secret = (await app.http.post('/api/sources').set(owner).send({ name: 'secret', type: 'text', content: 's' })).body;
    const readable = async (who: { key: string }) => {
      const text = await app.http.get(`/api/sources/${secret.id}/text`).set(hdr(who.key, ws.id));
      const listed = (await app.http.get('/api/sources').set(hdr(who.key, ws.id))).body.some((x: any) => x.id === secret.id);
      expect(listed).toBe(text.status === 200);
      return text.status === 200;
    };
    // The member's only group narrows the source; the Public group does not: hidden (the Public group does not widen it).
    const narrowed = await registerAgent(app);
    const hiding = await app.http.post('/api/groups').set(owner).send({ name: 'Hiding', capabilities: ['read'], members: [narrowed.id], sourcePermissions: { [secret.id]: { read: false } } });
    expect(hiding.status).toBe(201);
    expect(await readable(narrowed)).toBe(false);
    // A second own group that allows it: any own group allowing is enough.
    const allowing = await app.http.post('/api/groups').set(owner).send({ name: 'Allowing', capabilities: ['read'], members: [narrowed.id] });
    expect(allowing.status).toBe(201);
    expect(await readable(narrowed)).toBe(true);
    // A member of a silent own group while the Public group narrows: its own group decides, readable.
    const pub = (await app.http.get('/api/groups').set(owner)).body.find((x: any) => x.name === 'Public');
    await app.http.put(`/api/groups/${pub.id}`).set(owner).send({ sourcePermissions: { [secret.id]: { read: false } } }).expect(200);
    const silent = await registerAgent(app);
    await app.http.post(`/api/groups/${allowing.body.id}/members`).set(owner).send({ agentId: silent.id }).expect(200);
    expect(await readable(silent)).toBe(true);
    // A member in no group of its own (taken out again): the Public group decides, hidden.
    await app.http.delete(`/api/groups/${allowing.body.id}/members/${silent.id}`).set(owner).expect(200);
    expect(await readable(silent)).toBe(false);
    // Holders of manage see every source.
    expect((await app.http.get(`/api/sources/${secret.id}/text`).set(owner)).status).toBe(200);
  });

  it('github sources: tree and files at a ref through the fixture, ETag cache, refusals with a sentence', async () => {
    const ws = await buildWorkspace(app);
    const owner = hdr(ws.owner.key, ws.id);
    const src = await app.http.post('/api/sources').set(owner).send({ name: 'Handbook', type: 'github', repository: 'acme/handbook', defaultRef: 'main' });
    expect(src.status).toBe(201);
    expect(src.body).toMatchObject({ type: 'github', repository: 'acme/handbook', defaultRef: 'main', hasToken: false, bytes: null });
    const id = src.body.id;

    const root = await app.http.get(`/api/sources/${id}/tree`).set(owner);
    expect(root.status).toBe(200);
    expect(root.body).toMatchObject({ ref: 'main', path: '', cached: false, repository: 'acme/handbook' });
    expect(root.body.entries.map((e: any) => [e.name, e.type])).toEqual([['docs', 'dir'], ['README.md', 'file'], ['big.csv', 'file'], ['large.txt', 'file'], ['logo.png', 'file'], ['medium.txt', 'file']].sort((a, b) => (a[1] === 'dir' ? -1 : b[1] === 'dir' ? 1 : a[0].localeCompare(b[0]))));
    const again = await app.http.get(`/api/sources/${id}/tree`).set(owner);
    expect(again.body.cached).toBe(true);
    expect(again.body.entries).toEqual(root.body.entries);
    expect(gh.requests.filter((r) => r.status === 304).length).toBeGreaterThanOrEqual(1);

    const docs = await app.http.get(`/api/sources/${id}/tree?path=docs`).set(owner);
    expect(docs.body.entries.map((e: any) => e.path)).toEqual(['docs/deep', 'docs/metrics.md']);
    const readme = await app.http.get(`/api/sources/${id}/file?path=README.md`).set(owner);
    expect(readme.body).toMatchObject({ encoding: 'utf-8', content: '# Handbook\n\nRevenue is counted at invoice.\n', ref: 'main', size: 43 });
    const old = await app.http.get(`/api/sources/${id}/file?path=README.md&ref=v1`).set(owner);
    expect(old.body.content).toBe('# Old handbook\n');
    const logo = await app.http.get(`/api/sources/${id}/file?path=logo.png`).set(owner);
    expect(logo.body).toMatchObject({ encoding: 'base64', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]).toString('base64') });

    const big = await app.http.get(`/api/sources/${id}/file?path=big.csv`).set(owner);
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'source_file_too_large', size: 5_000_000, error: expect.stringContaining('bytes') });
    for (const bad of ['../secret-plans/plan.md', 'docs/../../x', '/etc/passwd', 'docs\\metrics.md', './README.md', 'docs//metrics.md', 'docs/%2e%2e/x']) {
      const before = gh.requests.length;
      const r = await app.http.get(`/api/sources/${id}/file?path=${encodeURIComponent(bad)}`).set(owner);
      expect({ bad, status: r.status, code: r.body.code }).toEqual({ bad, status: 400, code: 'source_path_invalid' });
      expect(r.body.error).toMatch(/refused/);
      expect(gh.requests.length).toBe(before); // never sent upstream
    }
    expect((await app.http.get(`/api/sources/${id}/tree?ref=${encodeURIComponent('main/../x')}`).set(owner)).body.code).toBe('source_path_invalid');
    expect((await app.http.get(`/api/sources/${id}/file?path=nope.md`).set(owner)).status).toBe(404);
    expect((await app.http.get(`/api/sources/${id}/file?path=docs`).set(owner)).status).toBe(400);
    expect((await app.http.get(`/api/sources/${id}/tree?path=README.md`).set(owner)).status).toBe(400);
    expect((await app.http.get(`/api/sources/${id}/text`).set(owner)).status).toBe(400);

    // Under the limit, a larger text file comes whole.
    const medium = await app.http.get(`/api/sources/${id}/file?path=medium.txt`).set(owner);
    expect(medium.status).toBe(200);
    expect(medium.body.size).toBe(300_000);
  });

  it('a private repository: the token is stored encrypted, sent upstream, never returned', async () => {
    const ws = await buildWorkspace(app);
    const owner = hdr(ws.owner.key, ws.id);
    const noToken = await app.http.post('/api/sources').set(owner).send({ name: 'Plans', type: 'github', repository: 'acme/secret-plans' });
    expect((await app.http.get(`/api/sources/${noToken.body.id}/file?path=plan.md`).set(owner)).status).toBe(404);

    const src = await app.http.post('/api/sources').set(owner).send({ name: 'Plans (token)', type: 'github', repository: 'acme/secret-plans', token: TOKEN });
    expect(src.status).toBe(201);
    expect(src.body.hasToken).toBe(true);
    expect(JSON.stringify(src.body)).not.toContain(TOKEN);
    const [{ token_enc }] = await app.deps.ds.query(`SELECT token_enc FROM sources WHERE id = $1`, [src.body.id]);
    expect(token_enc).toMatch(/^v1\./);
    expect(token_enc).not.toContain(TOKEN);
    const file = await app.http.get(`/api/sources/${src.body.id}/file?path=plan.md`).set(owner);
    expect(file.status).toBe(200);
    expect(file.body.content).toBe('ship in Q3');
    expect(gh.requests[gh.requests.length - 1].auth).toBe(`Bearer ${TOKEN}`);
    for (const r of [await app.http.get(`/api/sources/${src.body.id}`).set(owner), await app.http.get('/api/sources').set(owner)]) expect(JSON.stringify(r.body)).not.toContain(TOKEN);

    // A wrong token: the host refuses, the bridge says so (502) without the token.
    const wrong = await app.http.put(`/api/sources/${src.body.id}`).set(owner).send({ token: 'ghp_wrong' });
    expect(wrong.status).toBe(200);
    const refused = await app.http.get(`/api/sources/${src.body.id}/file?path=plan.md`).set(owner);
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ code: 'source_upstream_failed', upstreamStatus: 401 });
    const cleared = await app.http.put(`/api/sources/${src.body.id}`).set(owner).send({ token: null });
    expect(cleared.body.hasToken).toBe(false);
  });

  it('every upstream failure is coded: HTML, timeout, rate limit, TLS, redirect, private address; no upstream body is passed on', async () => {
    const ws = await buildWorkspace(app);
    const owner = hdr(ws.owner.key, ws.id);
    const src = (await app.http.post('/api/sources').set(owner).send({ name: 'Handbook', type: 'github', repository: 'acme/handbook', defaultRef: 'main' }).expect(201)).body;
    const tree = () => app.http.get(`/api/sources/${src.id}/tree`).set(owner);
    const SECRET = 'internal-metadata-secret-7731';
    const cases: Array<{ name: string; answer: RawAnswer; status: number; code: string; extra?: Record<string, unknown> }> = [
      { name: 'an HTML page (an Enterprise URL without /api/v3)', answer: { status: 200, headers: { 'Content-Type': 'text/html' }, body: `<html>${SECRET}</html>` }, status: 502, code: 'source_upstream_invalid' },
      { name: 'JSON promised, not sent', answer: { status: 200, headers: { 'Content-Type': 'application/json' }, body: `<html>${SECRET}` }, status: 502, code: 'source_upstream_invalid' },
      { name: 'a spent rate limit (403)', answer: { status: 403, headers: { 'Content-Type': 'application/json', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 120) }, body: JSON.stringify({ message: SECRET }) }, status: 503, code: 'source_upstream_rate_limited' },
      { name: 'a spent rate limit (429)', answer: { status: 429, headers: { 'Retry-After': '30' }, body: SECRET }, status: 503, code: 'source_upstream_rate_limited', extra: { retryAfter: 30 } },
      { name: 'an outage', answer: { status: 500, body: SECRET }, status: 502, code: 'source_upstream_failed', extra: { upstreamStatus: 500 } },
      { name: 'a refusal with a message', answer: { status: 403, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ message: SECRET }) }, status: 502, code: 'source_upstream_failed', extra: { upstreamStatus: 403 } },
      { name: 'a redirect', answer: { status: 302, headers: { Location: 'http://169.254.169.254/latest/meta-data/' }, body: SECRET }, status: 502, code: 'source_upstream_redirect' },
      { name: 'no answer in time', answer: { status: 200, headers: { 'Content-Type': 'application/json' }, body: '[]', delayMs: 3000 }, status: 503, code: 'source_upstream_timeout' },
    ];
    try {
      for (const c of cases) {
        gh.special = (path) => (path.includes('/repos/acme/handbook/') ? c.answer : null);
        const r = await tree();
        expect({ name: c.name, status: r.status, code: r.body.code }).toEqual({ name: c.name, status: c.status, code: c.code });
        expect(r.body.error).toMatch(/^The repository host.+\.$/);
        expect(JSON.stringify(r.body)).not.toContain(SECRET);
        if (c.extra) expect(r.body).toMatchObject(c.extra);
        if (c.status === 503) expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      }
    } finally {
      gh.special = () => null;
    }

    // A redirect to an internal service: not followed, the service never asked, its content never shown.
    const internal = http.createServer((_req, res) => res.end(SECRET));
    await new Promise<void>((r) => internal.listen(0, '127.0.0.1', () => r()));
    let internalHits = 0;
    internal.on('request', () => internalHits++);
    try {
      gh.special = (path) => (path.includes('/repos/acme/handbook/') ? { status: 301, headers: { Location: `http://127.0.0.1:${(internal.address() as AddressInfo).port}/` } } : null);
      const r = await app.http.get(`/api/sources/${src.id}/file?path=README.md`).set(owner);
      expect(r.status).toBe(502);
      expect(r.body.code).toBe('source_upstream_redirect');
      expect(JSON.stringify(r.body)).not.toContain(SECRET);
      expect(internalHits).toBe(0);
    } finally {
      gh.special = () => null;
      internal.closeAllConnections();
      await new Promise<void>((r) => internal.close(() => r()));
    }

    // TLS: an https URL at a host that does not speak TLS fails the handshake.
    const config = app.deps.config as { GITHUB_API_URL: string; SOURCE_ALLOW_PRIVATE: boolean };
    const base = config.GITHUB_API_URL;
    try {
      config.GITHUB_API_URL = base.replace(/^http:/, 'https:');
      const tls = await tree();
      expect({ status: tls.status, code: tls.body.code }).toEqual({ status: 502, code: 'source_upstream_tls' });
      expect(tls.body.tlsError).toEqual(expect.any(String));
      // Loopback, private and link-local addresses are refused after resolution unless the operator allows them.
      config.GITHUB_API_URL = base.replace('127.0.0.1', 'localhost');
      config.SOURCE_ALLOW_PRIVATE = false;
      const before = gh.requests.length;
      const refused = await tree();
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 502, code: 'source_upstream_refused' });
      expect(gh.requests.length).toBe(before);
    } finally {
      config.GITHUB_API_URL = base;
      config.SOURCE_ALLOW_PRIVATE = true;
    }
    expect((await tree()).status).toBe(200);
  });

  it('a token that no longer unseals is 409 saying to put it again; putting it again mends it', async () => {
    const ws = await buildWorkspace(app);
    const owner = hdr(ws.owner.key, ws.id);
    const src = (await app.http.post('/api/sources').set(owner).send({ name: 'Plans', type: 'github', repository: 'acme/secret-plans', token: TOKEN }).expect(201)).body;
    const config = app.deps.config as { SOURCE_TOKEN_KEY: string };
    const key = config.SOURCE_TOKEN_KEY;
    try {
      config.SOURCE_TOKEN_KEY = 'another-source-token-key-987654321';
      for (const p of ['tree', 'file?path=plan.md']) {
        const r = await app.http.get(`/api/sources/${src.id}/${p}`).set(owner);
        expect({ status: r.status, code: r.body.code }).toEqual({ status: 409, code: 'source_token_unreadable' });
        expect(r.body.error).toMatch(/put it again/);
      }
      await app.http.put(`/api/sources/${src.id}`).set(owner).send({ token: TOKEN }).expect(200);
      expect((await app.http.get(`/api/sources/${src.id}/file?path=plan.md`).set(owner)).body.content).toBe('ship in Q3');
    } finally {
      config.SOURCE_TOKEN_KEY = key;
    }
  });

  it('refs, repositories, ids and sizes: refused as stored, never 500; the documented limits are the enforced ones', async () => {
    const ws = await buildWorkspace(app);
    const owner = hdr(ws.owner.key, ws.id);
    for (const defaultRef of ['../main', 'main/../x', '.hidden', 'main.lock', 'a//b']) {
      const r = await app.http.post('/api/sources').set(owner).send({ name: 'x', type: 'github', repository: 'acme/handbook', defaultRef });
      expect({ defaultRef, status: r.status, code: r.body.code }).toEqual({ defaultRef, status: 400, code: 'source_path_invalid' });
    }
    for (const repository of ['a/..', 'a/.', '../b']) {
      expect((await app.http.post('/api/sources').set(owner).send({ name: 'x', type: 'github', repository })).status).toBe(400);
    }
    const src = (await app.http.post('/api/sources').set(owner).send({ name: 'Handbook', type: 'github', repository: 'acme/handbook', defaultRef: 'main' }).expect(201)).body;
    const put = await app.http.put(`/api/sources/${src.id}`).set(owner).send({ defaultRef: '../main' });
    expect({ status: put.status, code: put.body.code }).toEqual({ status: 400, code: 'source_path_invalid' });
    expect((await app.http.get(`/api/sources/${src.id}/tree`).set(owner)).status).toBe(200);

    // A 36-character id that is no UUID: 404 on every /sources/{id} route.
    const dashes = '-'.repeat(36);
    for (const [method, path] of [['get', ''], ['put', ''], ['delete', ''], ['get', '/text'], ['get', '/tree'], ['get', '/file?path=a']] as const) {
      const r = await (app.http as any)[method](`/api/sources/${dashes}${path}`).set(owner).send(method === 'put' ? { name: 'y' } : undefined);
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 404 });
    }

    // Text: exactly 1,048,576 bytes of UTF-8 is accepted (also as multi-byte text), one more is refused.
    const exact = await app.http.post('/api/sources').set(owner).send({ name: 'full', type: 'text', content: 'a'.repeat(1_048_576) });
    expect(exact.status).toBe(201);
    expect(exact.body.bytes).toBe(1_048_576);
    const escaped = await app.http.post('/api/sources').set(owner).send({ name: 'lines', type: 'text', content: '\n'.repeat(1_048_576) });
    expect(escaped.status).toBe(201);
    const over = await app.http.post('/api/sources').set(owner).send({ name: 'over', type: 'text', content: 'a'.repeat(1_048_577) });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatch(/1048576 bytes/);
    // Files: SOURCE_MAX_FILE_BYTES raised to 2 MiB here serves a 1.5 MB file (past the contents API's 1 MB, through the blob).
    const large = await app.http.get(`/api/sources/${src.id}/file?path=large.txt`).set(owner);
    expect(large.status).toBe(200);
    expect(large.body.size).toBe(1_500_000);
    expect(large.body.content).toBe('b'.repeat(1_500_000));
  });
});

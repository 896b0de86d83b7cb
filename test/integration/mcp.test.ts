import request from 'supertest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { accountSystem } from '../../src/services/accounts';
import { signUp, type TestPerson } from '../helpers/accounts';
import { buildWorkspace, mint, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { freshBookId } from '../helpers/markets';
import { connectThroughOAuth, mcpUrl, resultBody, type Confirmations, type TestOAuthProvider } from '../helpers/mcp';

describe('the MCP connector over the real OAuth 2.1 flow (spec §5.1, §2.13)', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let person: TestPerson;
  let client: Client;
  let provider: TestOAuthProvider;
  let confirmations: Confirmations;
  let authorize: URL;
  useTestApp((a) => (app = a), { PUBLIC_BASE_URL: 'listening' });

  beforeAll(async () => {
    ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
    person = await signUp(app);
    expect((await person.browser.post(`/api/marketplace/${ws.id}/join`).send({})).status).toBe(200);
    await mint(app, person.agentId, 1000);
    ({ client, provider, confirmations, authorize } = await connectThroughOAuth(app, person));
  });
  afterAll(async () => {
    await client?.close();
  });

  const base = () => app.deps.config.PUBLIC_BASE_URL;
  const connection = async () => (await app.deps.ds.query(`SELECT id, client_id FROM connections WHERE agent_id = $1 AND revoked_at IS NULL`, [person.agentId]))[0];
  const calls = async () => app.deps.ds.query(`SELECT tool, method, path, workspace, body, confirmation, status FROM connection_calls WHERE connection_id = $1 ORDER BY id`, [(await connection()).id]);
  const balance = async () => (await person.browser.get('/api/agents/me/balance')).body.balance as number;

  it('discovery: protected-resource and authorization-server metadata; the authorize request used PKCE S256 and the resource', async () => {
    const prm = await request(app.server).get('/.well-known/oauth-protected-resource/mcp');
    expect(prm.status).toBe(200);
    expect(prm.body).toMatchObject({ resource: `${base()}/mcp`, authorization_servers: [`${base()}/api/auth`] });
    const as = await request(app.server).get('/.well-known/oauth-authorization-server/api/auth');
    expect(as.status).toBe(200);
    expect(as.body).toMatchObject({ issuer: `${base()}/api/auth`, code_challenge_methods_supported: ['S256'], registration_endpoint: expect.stringContaining('/api/auth/') });
    expect(as.body.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('resource')).toBe(`${base()}/mcp`);
    // PKCE is S256 only: the same request with the plain method (or without PKCE) is sent back with an error.
    for (const change of [{ code_challenge_method: 'plain' }, { code_challenge: null, code_challenge_method: null }]) {
      const u = new URL(authorize);
      for (const [k, v] of Object.entries(change)) {
        if (v === null) u.searchParams.delete(k);
        else u.searchParams.set(k, v);
      }
      const res = await person.browser.get(`${u.pathname}${u.search}`).redirects(0);
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(/^https:\/\/assistant\.example\/callback\?error=invalid_request/);
    }
    const missing = await fetch(mcpUrl(app), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base()}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('lists the tools by ask type with the routes\' schemas, reads as the person, quotes, and trades only when the person confirms', async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBe(56);
    const tradeTool = tools.find((t) => t.name === 'trade')!;
    expect(tradeTool.description).toMatch(/^\[trade\]/);
    expect(Object.keys((tradeTool.inputSchema.properties as any).body.properties)).toEqual(expect.arrayContaining(['marketId', 'direction', 'amount', 'targetValue', 'maxBudget']));

    const me = resultBody(await client.callTool({ name: 'whoami', arguments: {} }));
    expect(me.id).toBe(person.agentId);
    const conn = await connection();
    expect(conn.client_id).toBe(provider.clientInformation()!.client_id);

    const marketId = await freshBookId(app, ws);
    const quote = await client.callTool({ name: 'quote', arguments: { workspace: ws.id, body: { marketId, direction: 'higher', amount: 10 } } });
    expect(quote.isError).toBeFalsy();
    expect(resultBody(quote)).toMatchObject({ dryRun: true });
    expect(confirmations.asked).toHaveLength(0); // look never asks

    const before = await balance();
    confirmations.answers.push({ action: 'accept', content: { confirm: true } });
    const placed = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'higher', amount: 10 } } });
    expect(placed.isError).toBeFalsy();
    expect(resultBody(placed)).toMatchObject({ kind: 'buy', cost: 10 });
    // Written for a person: the workspace and book by name and date, the direction, the cost, the shares, the consensus before and after.
    expect(confirmations.asked[0]).toMatch(new RegExp(`^Test Assistant wants to trade in “[^”]+” \\(asked because of “trade”\\): higher on “.+” for [\\d-]+: cost 10 credits for [\\d.]+ shares; consensus [\\d.,]+ → [\\d.,]+`));
    expect(confirmations.asked[0]).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(await balance()).toBeCloseTo(before - 10, 6);

    confirmations.answers.push({ action: 'decline' });
    const declined = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'higher', amount: 10 } } });
    expect(declined.isError).toBe(true);
    expect(resultBody(declined)).toMatch(/declined.*nothing was sent/);
    expect(await balance()).toBeCloseTo(before - 10, 6);

    // A trade its own dry run says cannot be paid is never asked about (issue 64): the refusal is the answer, with the API's code.
    const asked = confirmations.asked.length;
    const tooMuch = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'higher', amount: 1_000_000 } } });
    expect(tooMuch.isError).toBe(true);
    expect(resultBody(tooMuch)).toMatchObject({ code: 'insufficient_balance', error: expect.stringMatching(/^Not enough credits: this trade on “.+” for [\d-]+ needs 1,000,000 credits and your balance is [\d,.]+ credits/) });
    // Input the route refuses is not asked about either: the route's own validation answers.
    const bad = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'sideways', amount: 10 } } });
    expect(resultBody(bad)).toMatchObject({ code: 'validation_failed' });
    expect(confirmations.asked.length).toBe(asked);

    const rows = await calls();
    expect(rows.map((r: any) => [r.tool, r.confirmation, r.status])).toEqual([
      ['whoami', 'not_asked', 200],
      ['quote', 'not_asked', 200],
      ['trade', 'accepted', 200],
      ['trade', 'declined', 0],
      ['trade', 'not_asked', 0],
      ['trade', 'not_asked', 0],
    ]);
    expect(rows[2]).toMatchObject({ method: 'POST', path: '/api/predictions/trade', workspace: ws.id });
    expect(JSON.parse(rows[2].body)).toEqual({ marketId, direction: 'higher', amount: 10 });
    await expectLedgerSound(app.deps);
  });

  it('the connect guide lists every tool under its ask type, as the connector serves them', async () => {
    const guide = await request(app.server).get('/api/guides/connect');
    expect(guide.status).toBe(200);
    const documented: Record<string, string[]> = {};
    for (const m of guide.text.matchAll(/^\| `([a-z]+)` \|[^|]*\|[^|]*\| (.*) \|$/gm)) documented[m[1]] = [...m[2].matchAll(/`([a-z_]+)`/g)].map((x) => x[1]).sort();
    const served: Record<string, string[]> = {};
    for (const t of (await client.listTools()).tools) (served[/^\[([a-z]+)\]/.exec(t.description ?? '')![1]] ??= []).push(t.name);
    for (const k of Object.keys(served)) served[k].sort();
    expect(documented).toEqual(served);
    expect(Object.keys(served).sort()).toEqual(['access', 'build', 'decide', 'fund', 'look', 'money', 'post', 'publish', 'remove', 'trade']);
  });

  it('trims a logged body to 4,000 characters', async () => {
    const long = 'x'.repeat(6000);
    const res = await client.callTool({ name: 'comment', arguments: { workspace: ws.id, id: '00000000-0000-4000-8000-000000000000', body: { body: long } } });
    expect(res.isError).toBe(true);
    const [row] = await app.deps.ds.query(`SELECT body, status FROM connection_calls WHERE connection_id = $1 AND tool = 'comment'`, [(await connection()).id]);
    expect(row.body.length).toBe(4000);
    expect(row.status).toBe(400);
  });

  it('the access token is refused at the main API (401 with a sentence); a token for another resource is refused at /mcp', async () => {
    const token = provider.tokens()!.access_token;
    const atApi = await request(app.server).get('/api/agents/me').set('Authorization', `Bearer ${token}`);
    expect(atApi.status).toBe(401);
    expect(atApi.body).toMatchObject({ code: 'invalid_credentials', error: expect.stringMatching(/only at \/mcp/) });
    // A token the same server issued for another resource (its audience is not /mcp).
    const other = await request(app.server)
      .post('/api/auth/oauth2/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: provider.tokens()!.refresh_token!, client_id: provider.clientInformation()!.client_id, resource: `${base()}/api` });
    // And one signed with this server's own keys, right issuer, subject and client, but another audience.
    const [{ account_id: userId }] = await app.deps.ds.query(`SELECT account_id FROM agents WHERE id = $1`, [person.agentId]);
    const signed = (aud: string) =>
      accountSystem(app.deps).auth.api.signJWT({
        body: { payload: { sub: userId, azp: provider.clientInformation()!.client_id, aud, iss: `${base()}/api/auth`, exp: Math.floor(Date.now() / 1000) + 300 } },
      });
    const listTools = (t: string) =>
      fetch(mcpUrl(app), { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
    const elsewhere = await listTools((await signed(`${base()}/api`)).token);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await listTools((await signed(`${base()}/mcp`)).token)).status).toBe(200); // the same token for /mcp passes
    if (other.status === 200) {
      provider.saveTokens(other.body);
      const refused = await fetch(mcpUrl(app), { method: 'POST', headers: { authorization: `Bearer ${other.body.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      expect(refused.status).toBe(401);
    } else {
      // The server refuses to mint it at all: a resource it does not serve.
      expect(other.status).toBe(400);
      expect(other.body.error).toMatch(/invalid_target|invalid_request|invalid_grant/);
    }
  });

  it('refresh rotates the refresh token (the old one is refused)', async () => {
    const clientId = provider.clientInformation()!.client_id;
    const old = provider.tokens()!.refresh_token!;
    const rotated = await request(app.server).post('/api/auth/oauth2/token').type('form').send({ grant_type: 'refresh_token', refresh_token: old, client_id: clientId, resource: `${base()}/mcp` });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).toBeTruthy();
    expect(rotated.body.refresh_token).not.toBe(old);
    provider.saveTokens(rotated.body);
    const again = await request(app.server).post('/api/auth/oauth2/token').type('form').send({ grant_type: 'refresh_token', refresh_token: old, client_id: clientId, resource: `${base()}/mcp` });
    expect(again.status).toBe(400);
    // The new access token works at /mcp.
    const ok = await fetch(mcpUrl(app), { method: 'POST', headers: { authorization: `Bearer ${rotated.body.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
    expect(ok.status).toBe(200);
  });

  it('GET /connections and its calls (newest first, before=, 404 for another person)', async () => {
    const list = await person.browser.get('/api/connections');
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        id: (await connection()).id,
        clientId: provider.clientInformation()!.client_id,
        clientName: 'Test Assistant',
        redirectHost: 'assistant.example',
        connectedAt: expect.any(String),
        lastUsedAt: expect.any(String),
        ask: { look: false, build: false, trade: true, fund: true, post: false, decide: true, publish: true, remove: true, access: true, money: true },
        scopes: ['*'],
      },
    ]);
    const id = list.body[0].id;
    const callsRes = await person.browser.get(`/api/connections/${id}/calls`);
    expect(callsRes.status).toBe(200);
    expect(callsRes.body.length).toBeGreaterThanOrEqual(6);
    const ats = callsRes.body.map((r: any) => Date.parse(r.at));
    expect([...ats].sort((a, b) => b - a)).toEqual(ats);
    expect(callsRes.body.find((r: any) => r.confirmation === 'declined')).toMatchObject({ tool: 'trade', status: 0, method: 'POST', path: '/api/predictions/trade' });
    const older = await person.browser.get(`/api/connections/${id}/calls`).query({ before: callsRes.body[1].at });
    expect(older.body.every((r: any) => Date.parse(r.at) < Date.parse(callsRes.body[1].at))).toBe(true);
    const stranger = await signUp(app);
    expect((await stranger.browser.get(`/api/connections/${id}/calls`)).status).toBe(404);
    expect((await stranger.browser.get('/api/connections')).body).toEqual([]);
  });

  it('PUT /connections/{id}/ask: look or anything else is 400; trade off lets the assistant trade without asking', async () => {
    const id = (await connection()).id;
    for (const body of [{ ask: { look: true } }, { ask: { trade: false }, confirmations: true }, { ask: { confirmations: false } }]) {
      const bad = await person.browser.put(`/api/connections/${id}/ask`).send(body);
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('validation_failed');
    }
    const off = await person.browser.put(`/api/connections/${id}/ask`).send({ ask: { trade: false } });
    expect(off.status).toBe(200);
    expect(off.body.ask).toMatchObject({ trade: false, money: true, look: false });
    const marketId = await freshBookId(app, ws);
    // A trade moves credits: with trade off it still asks, under money, and a decline sends nothing.
    const asked = confirmations.asked.length;
    confirmations.answers.push({ action: 'decline' });
    const stillAsked = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'lower', amount: 5 } } });
    expect(stillAsked.isError).toBe(true);
    expect(confirmations.asked.length).toBe(asked + 1);
    expect(confirmations.asked.at(-1)).toMatch(/asked because of “money”/);
    expect((await calls()).at(-1)).toMatchObject({ tool: 'trade', confirmation: 'declined', status: 0 });
    // money still asks: a declined transfer sends nothing.
    confirmations.answers.push({ action: 'decline' });
    const t = await client.callTool({ name: 'transfer', arguments: { body: { toAgent: ws.owner.id, amount: 1 } } });
    expect(t.isError).toBe(true);
    // Credits are the account's: the question names the recipient by nickname and no workspace.
    expect(confirmations.asked.at(-1)).toMatch(/^Test Assistant wants to transfer 1 credit from your balance to “[^”]+” \(asked because of “money”\); your balance after: [\d,.]+ credits\. Go ahead\?$/);
    expect(confirmations.asked.at(-1)).not.toContain(ws.owner.id);
    expect((await calls()).at(-1)).toMatchObject({ tool: 'transfer', confirmation: 'declined', status: 0 });
    // Only turning money off explicitly lets the assistant trade without asking.
    expect((await person.browser.put(`/api/connections/${id}/ask`).send({ ask: { money: false } })).body.ask).toMatchObject({ trade: false, money: false });
    const before = confirmations.asked.length;
    const placed = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'lower', amount: 5 } } });
    expect(placed.isError).toBeFalsy();
    expect(confirmations.asked.length).toBe(before);
    expect((await calls()).at(-1)).toMatchObject({ tool: 'trade', confirmation: 'not_asked', status: 200 });
    await expectLedgerSound(app.deps);
  });

  it('DELETE /connections/{id}: the old access token is refused at /mcp at once, the refresh token too, and the key is revoked', async () => {
    const { id } = await connection();
    const [{ key_id: keyId }] = await app.deps.ds.query(`SELECT key_id FROM connections WHERE id = $1`, [id]);
    const tokens = provider.tokens()!;
    const raw = (t: string) =>
      fetch(mcpUrl(app), { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
    expect((await raw(tokens.access_token)).status).toBe(200);
    expect((await person.browser.delete(`/api/connections/${id}`)).status).toBe(204);
    const refused = await raw(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: expect.stringMatching(/connection was removed/) });
    await expect(client.callTool({ name: 'whoami', arguments: {} })).rejects.toThrow();
    const refresh = await request(app.server).post('/api/auth/oauth2/token').type('form').send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: provider.clientInformation()!.client_id, resource: `${base()}/mcp` });
    expect(refresh.status).toBe(400);
    expect(refresh.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/^This connection was removed/) });
    const [key] = await app.deps.ds.query(`SELECT revoked_at FROM api_keys WHERE id = $1`, [keyId]);
    expect(key.revoked_at).not.toBeNull();
    expect((await person.browser.get('/api/connections')).body).toEqual([]);
    expect((await person.browser.delete(`/api/connections/${id}`)).status).toBe(404);
    await expectLedgerSound(app.deps);
  });
});

describe('signing in on the authorization page', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), { PUBLIC_BASE_URL: 'listening' });

  it('a person without a session signs in on the server-rendered page, consents, and the assistant connects as them', async () => {
    const person = await signUp(app);
    await person.browser.post('/api/auth/sign-out').send({});
    const { client } = await connectThroughOAuth(app, person, { signInOnPage: true });
    try {
      const me = await client.callTool({ name: 'whoami', arguments: {} });
      expect(me.isError).toBeFalsy();
      expect(resultBody(me).id).toBe(person.agentId);
      // Deleting the account removes its connections: the assistant is refused at once.
      expect((await person.browser.delete('/api/auth/me')).status).toBe(204);
      await expect(client.callTool({ name: 'whoami', arguments: {} })).rejects.toThrow();
      const [row] = await app.deps.ds.query(`SELECT c.revoked_at, k.revoked_at AS key_revoked FROM connections c JOIN api_keys k ON k.id = c.key_id WHERE c.agent_id = $1`, [person.agentId]);
      expect(row.revoked_at).not.toBeNull();
      expect(row.key_revoked).not.toBeNull();
    } finally {
      await client.close();
    }
    await expectLedgerSound(app.deps);
  });
});

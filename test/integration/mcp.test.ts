import { openConnection } from '../../src/services/connections';
import { signUp, type TestPerson } from '../helpers/accounts';
import { buildWorkspace, mint, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { freshBookId } from '../helpers/markets';
import { connectClient, mcpUrl, resultBody } from '../helpers/mcp';

describe('/mcp: the connector acts as the person, asking before it acts (spec §2.13)', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let person: TestPerson;
  let token: string;
  let connectionId: string;
  useTestApp((a) => (app = a));

  beforeAll(async () => {
    ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
    person = await signUp(app);
    expect((await person.browser.post(`/api/marketplace/${ws.id}/join`).send({})).status).toBe(200);
    await mint(app, person.agentId, 1000);
    const opened = await openConnection(app.deps, { agentId: person.agentId, clientId: 'test-client', clientName: 'Test Assistant', redirectHost: 'localhost' });
    token = opened.token;
    connectionId = opened.connection.id;
  });

  const calls = async () =>
    app.deps.ds.query(`SELECT tool, method, path, workspace, body, confirmation, status FROM connection_calls WHERE connection_id = $1 ORDER BY id`, [connectionId]);
  const balance = async () => (await person.browser.get('/api/agents/me/balance')).body.balance as number;

  it('refuses a request without a token with 401 and the resource metadata address', async () => {
    const res = await fetch(mcpUrl(app), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${app.deps.config.PUBLIC_BASE_URL}/.well-known/oauth-protected-resource/mcp"`);
    const bad = await fetch(mcpUrl(app), { method: 'POST', headers: { authorization: 'Bearer nope', 'content-type': 'application/json' }, body: '{}' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('lists the tools by ask type with the routes\' schemas, reads as the person, quotes, and trades only when the person confirms', async () => {
    const { client, person: answers } = await connectClient(app, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBe(46);
      const tradeTool = tools.find((t) => t.name === 'trade')!;
      expect(tradeTool.description).toMatch(/^\[trade\]/);
      expect(Object.keys((tradeTool.inputSchema.properties as any).body.properties)).toEqual(expect.arrayContaining(['marketId', 'direction', 'amount', 'targetValue', 'maxBudget']));

      const me = resultBody(await client.callTool({ name: 'whoami', arguments: {} }));
      expect(me.id).toBe(person.agentId);

      const marketId = await freshBookId(app, ws);
      const quote = await client.callTool({ name: 'quote', arguments: { workspace: ws.id, body: { marketId, direction: 'higher', amount: 10 } } });
      expect(quote.isError).toBeFalsy();
      expect(resultBody(quote)).toMatchObject({ dryRun: true });
      expect(answers.asked).toHaveLength(0); // look never asks

      const before = await balance();
      answers.answers.push({ action: 'accept', content: { confirm: true } });
      const placed = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'higher', amount: 10 } } });
      expect(placed.isError).toBeFalsy();
      expect(resultBody(placed)).toMatchObject({ kind: 'buy', cost: 10 });
      expect(answers.asked[0]).toMatch(/trade.*POST \/api\/predictions\/trade/);
      expect(await balance()).toBeCloseTo(before - 10, 6);

      answers.answers.push({ action: 'decline' });
      const declined = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'higher', amount: 10 } } });
      expect(declined.isError).toBe(true);
      expect(resultBody(declined)).toMatch(/declined.*nothing was sent/);
      expect(await balance()).toBeCloseTo(before - 10, 6);

      // A refusal by the API itself is a tool error with the API's sentence and code.
      answers.answers.push({ action: 'accept', content: { confirm: true } });
      const tooMuch = await client.callTool({ name: 'trade', arguments: { workspace: ws.id, body: { marketId, direction: 'higher', amount: 1_000_000 } } });
      expect(tooMuch.isError).toBe(true);
      expect(resultBody(tooMuch).code).toBe('insufficient_balance');

      const rows = await calls();
      expect(rows.map((r: any) => [r.tool, r.confirmation, r.status])).toEqual([
        ['whoami', 'not_asked', 200],
        ['quote', 'not_asked', 200],
        ['trade', 'accepted', 200],
        ['trade', 'declined', 0],
        ['trade', 'accepted', 400],
      ]);
      expect(rows[2]).toMatchObject({ method: 'POST', path: '/api/predictions/trade', workspace: ws.id });
      expect(JSON.parse(rows[2].body)).toEqual({ marketId, direction: 'higher', amount: 10 });
    } finally {
      await client.close();
    }
    await expectLedgerSound(app.deps);
  });

  it('trims a logged body to 4,000 characters', async () => {
    const { client } = await connectClient(app, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    try {
      const long = 'x'.repeat(6000);
      const res = await client.callTool({ name: 'comment', arguments: { workspace: ws.id, id: '00000000-0000-4000-8000-000000000000', body: { body: long } } });
      expect(res.isError).toBe(true);
      const [row] = await app.deps.ds.query(`SELECT body, status FROM connection_calls WHERE connection_id = $1 AND tool = 'comment'`, [connectionId]);
      expect(row.body.length).toBe(4000);
      expect(row.status).toBe(400);
    } finally {
      await client.close();
    }
  });
});

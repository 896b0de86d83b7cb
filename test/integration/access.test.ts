import { expectLedgerSound, startTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { buildWorkspace, registerAgent, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { cellOf, expected, SCOPE_SETS, type Cell, type MatrixEndpoint, type Membership, type ScopeSet } from '../helpers/accessMatrix';

/**
 * The access matrix (spec §5): credential kind x group membership x representative endpoints, each
 * cell asserting the status and the error code. Expected cells come from the rules written out in
 * `expected()` (test/helpers/accessMatrix.ts, shared with policies.test.ts): group capabilities, intersected
 * with key scopes, against what the endpoint needs.
 */

let app: TestApp;
let ws: TestWorkspace; // private
let other: TestWorkspace; // private, for locked keys
let pub: TestWorkspace; // public
let marketId: string | null = null;

interface Endpoint extends MatrixEndpoint {
  send(h: Record<string, string>): Promise<{ status: number; body: any }>;
}

function withHeaders(req: any, h: Record<string, string>) {
  for (const [k, v] of Object.entries(h)) req.set(k, v);
  return req;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'read: GET /workspaces/current', method: 'GET', needs: ['read'], publicRead: true, send: (h) => withHeaders(app.http.get('/api/workspaces/current'), h) },
  { name: 'read (identity): GET /groups', method: 'GET', needs: ['read'], send: (h) => withHeaders(app.http.get('/api/groups'), h) },
  {
    name: 'trade: POST /predictions/trade dryRun',
    method: 'POST',
    needs: ['trade'],
    send: (h) => withHeaders(app.http.post('/api/predictions/trade'), h).send({ marketId, direction: 'higher', amount: 1, dryRun: true }),
  },
  { name: 'manage: GET /agents', method: 'GET', needs: ['manage'], send: (h) => withHeaders(app.http.get('/api/agents'), h) },
  {
    name: 'manage_workspace: PATCH /workspaces/{id} visibility',
    method: 'PATCH',
    needs: ['manage', 'manage_workspace'],
    // The workspace of the row (X-Workspace-Id) is the one patched, to its current visibility.
    send: (h) => withHeaders(app.http.patch(`/api/workspaces/${h['X-Workspace-Id']}`), h).send({ visibility: h['X-Workspace-Id'] === pub.id ? 'public' : 'private' }),
  },
  { name: 'account:keys: GET /agents/me/keys', method: 'GET', needs: [], scope: 'account:keys', send: (h) => withHeaders(app.http.get('/api/agents/me/keys'), h) },
  { name: 'account:read: GET /agents/mine', method: 'GET', needs: [], scope: 'account:read', send: (h) => withHeaders(app.http.get('/api/agents/mine'), h) },
];

const members = {} as Record<Membership, TestAgent>;
const keys = {} as Record<Membership, Record<ScopeSet, string>>;
let viewLink: string;
let lockedKey: string;

async function mintKey(agent: TestAgent, body: Record<string, unknown>): Promise<string> {
  const res = await app.http.post('/api/agents/me/keys').set('X-Agent-Key', agent.key).send(body);
  if (res.status !== 201) throw new Error(`mint key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.apiKey;
}

async function groupId(name: string): Promise<string> {
  const res = await app.http.get('/api/groups').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
  return res.body.find((g: { name: string }) => g.name === name).id;
}

async function addToGroup(group: string, agent: TestAgent): Promise<void> {
  const res = await app.http.post(`/api/groups/${group}/members`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ agentId: agent.id });
  if (res.status !== 200) throw new Error(`add member failed: ${res.status} ${JSON.stringify(res.body)}`);
}

beforeAll(async () => {
  app = await startTestApp();
  ws = await buildWorkspace(app, { public: false });
  other = await buildWorkspace(app, { public: false });
  pub = await buildWorkspace(app, { public: true });
  members.owner = ws.owner;
  for (const m of ['outsider', 'public', 'trader', 'admin', 'owner-group'] as Membership[]) members[m] = await registerAgent(app);
  await addToGroup(await groupId('Public'), members.public);
  await addToGroup(await groupId('Trader'), members.trader);
  await addToGroup(await groupId('Admin'), members.admin);
  const owners = await app.http
    .post('/api/groups')
    .set('X-Agent-Key', ws.owner.key)
    .set('X-Workspace-Id', ws.id)
    .send({ name: 'Co-owners', capabilities: ['read', 'trade', 'manage', 'manage_workspace'], members: [members['owner-group'].id] });
  expect(owners.status).toBe(201);
  for (const m of Object.keys(members) as Membership[]) {
    keys[m] = {} as Record<ScopeSet, string>;
    for (const s of Object.keys(SCOPE_SETS) as ScopeSet[]) keys[m][s] = await mintKey(members[m], { scopes: SCOPE_SETS[s], label: `matrix ${s}` });
  }
  // The trader, also a member of `other`, with a key locked to `other`.
  const join = await app.http.post(`/api/groups/${await otherGroup('Trader')}/members`).set('X-Agent-Key', other.owner.key).set('X-Workspace-Id', other.id).send({ agentId: members.trader.id });
  expect(join.status).toBe(200);
  lockedKey = await mintKey(members.trader, { workspaceId: other.id, workspaceLocked: true, label: 'locked' });
  const vl = await app.http.get(`/api/workspaces/${ws.id}/view-link`).set('X-Agent-Key', ws.owner.key);
  expect(vl.status).toBe(200);
  viewLink = vl.body.token;
  // A market to dry-run against, when the metrics and markets areas open books on metric creation.
  const metric = await app.http.post('/api/metrics').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ name: uniqueName('m'), value: 500 });
  if (metric.status === 201 || metric.status === 200) {
    const books = await app.http.get(`/api/predictions/markets?metricId=${metric.body.id}`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
    marketId = books.body?.[0]?.id ?? null;
  }
});

async function otherGroup(name: string): Promise<string> {
  const res = await app.http.get('/api/groups').set('X-Agent-Key', other.owner.key).set('X-Workspace-Id', other.id);
  return res.body.find((g: { name: string }) => g.name === name).id;
}

afterAll(async () => {
  await expectLedgerSound(app.deps);
  await app.close();
});

describe('access matrix', () => {
  it('has a market for the trade column', () => {
    expect(marketId).toEqual(expect.any(String));
  });

  const rows: Array<{ label: string; cred: Parameters<typeof expected>[1]; headers: () => Record<string, string> }> = [
    { label: 'no credentials', cred: { kind: 'none' }, headers: () => ({ 'X-Workspace-Id': ws.id }) },
    { label: 'no credentials, public workspace', cred: { kind: 'view-link' }, headers: () => ({ 'X-Workspace-Id': pub.id }) },
    {
      label: 'non-member of a public workspace (Public group applies)',
      cred: { kind: 'key', membership: 'public', scopes: '*' },
      headers: () => ({ 'X-Workspace-Id': pub.id, 'X-Agent-Key': keys.outsider['*'] }),
    },
    { label: 'view link', cred: { kind: 'view-link' }, headers: () => ({ 'X-Workspace-Id': ws.id, 'X-View-Link': viewLink }) },
    { label: 'master key', cred: { kind: 'master' }, headers: () => ({ 'X-Workspace-Id': ws.id, 'X-API-Key': app.masterKey }) },
    { label: 'key locked to another workspace', cred: { kind: 'locked-other' }, headers: () => ({ 'X-Workspace-Id': ws.id, 'X-Agent-Key': lockedKey }) },
  ];
  for (const m of ['outsider', 'public', 'trader', 'admin', 'owner-group', 'owner'] as Membership[]) {
    for (const s of Object.keys(SCOPE_SETS) as ScopeSet[]) {
      rows.push({ label: `${m} with key scopes ${s}`, cred: { kind: 'key', membership: m, scopes: s }, headers: () => ({ 'X-Workspace-Id': ws.id, 'X-Agent-Key': keys[m][s] }) });
    }
  }

  it.each(rows.map((r) => [r.label, r] as const))('%s', async (_label, row) => {
    const want: Record<string, Cell> = {};
    const got: Record<string, Cell> = {};
    for (const e of ENDPOINTS) {
      want[e.name] = expected(e, row.cred);
      const res = await e.send(row.headers());
      got[e.name] = cellOf(res);
      if (res.status !== 200) {
        expect(typeof res.body.error).toBe('string');
        if (res.body.code === 'not_authorized') expect(res.body.requiredCapabilities).toEqual(expect.any(Array));
        if (res.body.code === 'scope_denied') expect(res.body.requiredScopes).toEqual(expect.any(Array));
      }
    }
    expect(got).toEqual(want);
  });

  it('a key locked to its own workspace acts there like an unlocked key', async () => {
    const h = { 'X-Agent-Key': lockedKey, 'X-Workspace-Id': other.id };
    expect((await app.http.get('/api/groups').set(h)).status).toBe(200);
    // Without X-Workspace-Id the key's workspace applies.
    const cur = await app.http.get('/api/workspaces/current').set('X-Agent-Key', lockedKey);
    expect(cur.status).toBe(200);
    expect(cur.body.id).toBe(other.id);
  });

  it('a view link opens only its own workspace', async () => {
    const res = await app.http.get('/api/workspaces/current').set('X-View-Link', viewLink).set('X-Workspace-Id', other.id);
    expect(res.status).toBe(401);
    const bare = await app.http.get('/api/workspaces/current').set('X-View-Link', viewLink);
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({ id: ws.id, capabilities: ['read'] });
  });
});

describe('help catalog', () => {
  it('every route states an explicit capability and scope requirement', async () => {
    const res = await app.http.get('/api/help');
    expect(res.status).toBe(200);
    const missing = res.body.endpoints.filter(
      (e: { capability: unknown; scope: unknown }) => typeof e.capability !== 'string' || !e.capability || typeof e.scope !== 'string' || !e.scope,
    );
    expect(missing).toEqual([]);
    const find = (m: string, p: string) => res.body.endpoints.find((e: { method: string; path: string }) => e.method === m && e.path === p);
    expect(find('POST', '/api/groups')).toMatchObject({ capability: 'manage', scope: 'workspace:manage' });
    expect(find('GET', '/api/agents/{id}/keys')).toMatchObject({ capability: 'self or creator', scope: 'account:keys' });
    expect(find('DELETE', '/api/workspaces/{id}')).toMatchObject({ capability: 'manage_workspace', scope: '*' });
    expect(find('POST', '/api/onboard')).toMatchObject({ capability: 'none', scope: 'none' });
    expect(find('POST', '/api/agents')).toMatchObject({ capability: 'identity', scope: 'account:agents' });
  });
});

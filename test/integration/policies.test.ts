import request from 'supertest';
import { resolveCaller, type Caller } from '../../src/api/access';
import { callRoute, runRoute, inProcessContext, toApiError, type Acting } from '../../src/api/dispatch';
import { registeredRoutes, type AnyRoute, type RouteDef } from '../../src/api/registry';
import {
  getAgentsById,
  getAgentsByIdBalance,
  getAgentsByIdDeposits,
  getAgentsByIdKeys,
  getAgentsByIdLedger,
  getAgentsByIdNotifications,
  getAgentsByIdPositions,
  getAgentsByIdTrades,
  getAgentsByIdWithdrawals,
} from '../../src/api/routes';
import { policies, type AuthRule } from '../../src/services/access';
import { startTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { buildWorkspace, registerAgent, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { signUp } from '../helpers/accounts';
import { cellOf, expected, type Cap, type Cell, type Cred, type MatrixEndpoint } from '../helpers/accessMatrix';

/**
 * Every registered route x every kind of principal, against the policies (src/services/access/policies):
 * each route's rule is a policy's, and what runRoute answers (checkOnly: the handler never runs; no
 * validation: only the rule is asked) is the cell the shared access matrix (test/helpers/accessMatrix.ts)
 * computes from that rule. Real principals: keys minted, groups joined, a view link, a browser session,
 * the master key, over real Postgres.
 */

let app: TestApp;
let ws: TestWorkspace; // private: the workspace every row names
let other: TestWorkspace; // private: another workspace's owner, and a key locked to it
let pub: TestWorkspace; // public
const agents = {} as Record<'public' | 'trader' | 'admin', TestAgent>;
let bot: { agentId: string }; // a child participant the trader created, a member of `ws`

interface Row {
  label: string;
  cred: Cred;
  as: () => Promise<Acting>;
}

const rows: Row[] = [];
const ip = '127.0.0.9';

async function keyCaller(key: string): Promise<Caller> {
  const caller = await resolveCaller(app.deps, { 'x-agent-key': key });
  if (!caller) throw new Error('no caller for a minted key');
  return caller;
}

async function mintKey(agent: TestAgent, body: Record<string, unknown>): Promise<string> {
  const res = await app.http.post('/api/agents/me/keys').set('X-Agent-Key', agent.key).send(body);
  if (res.status !== 201) throw new Error(`mint key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.apiKey;
}

async function groupOf(w: TestWorkspace, name: string): Promise<string> {
  const res = await app.http.get('/api/groups').set('X-Agent-Key', w.owner.key).set('X-Workspace-Id', w.id);
  return res.body.find((g: { name: string }) => g.name === name).id;
}

async function addToGroup(w: TestWorkspace, group: string, agentId: string): Promise<void> {
  const res = await app.http.post(`/api/groups/${await groupOf(w, group)}/members`).set('X-Agent-Key', w.owner.key).set('X-Workspace-Id', w.id).send({ agentId });
  if (res.status !== 200) throw new Error(`add member failed: ${res.status} ${JSON.stringify(res.body)}`);
}

beforeAll(async () => {
  app = await startTestApp({}, { workers: false });
  ws = await buildWorkspace(app, { public: false });
  other = await buildWorkspace(app, { public: false });
  pub = await buildWorkspace(app, { public: true });
  for (const m of ['public', 'trader', 'admin'] as const) agents[m] = await registerAgent(app);
  await addToGroup(ws, 'Public', agents.public.id);
  await addToGroup(ws, 'Trader', agents.trader.id);
  await addToGroup(ws, 'Admin', agents.admin.id);
  await addToGroup(other, 'Trader', agents.trader.id);
  const limitedKey = await mintKey(agents.admin, { scopes: ['workspace:read'], label: 'policies read-only' });
  const accountKey = await mintKey(agents.trader, { scopes: ['account:read', 'account:keys'], label: 'policies account-only' });
  const lockedKey = await mintKey(agents.trader, { workspaceId: other.id, workspaceLocked: true, label: 'policies locked' });
  // The trader makes a bot (a trader may not enrol it: that needs manage), and the owner adds it to ws.
  const made = await app.http.post('/api/agents').set('X-Agent-Key', agents.trader.key).send({ agentId: uniqueName('bot') });
  expect(made.status).toBe(201);
  bot = made.body;
  await addToGroup(ws, 'Trader', bot.agentId);
  const viewLink = (await app.http.get(`/api/workspaces/${ws.id}/view-link`).set('X-Agent-Key', ws.owner.key).expect(200)).body.token as string;

  // A browser session: its participant trades in `ws`.
  const person = await signUp(app, uniqueName('policies'));
  await addToGroup(ws, 'Trader', person.agentId);
  const signIn = await request(app.server).post('/api/auth/sign-in/email').send({ email: person.email, password: person.password });
  expect(signIn.status).toBe(200);
  const cookie = ([] as string[]).concat(signIn.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
  const session = await resolveCaller(app.deps, { cookie });
  expect(session).toMatchObject({ agentId: person.agentId, accountId: expect.any(String), isMaster: false });

  const inWs = (caller: Caller | null, viewToken: string | null = null): Acting => ({ caller, workspace: ws.id, viewToken, ip });
  rows.push(
    { label: 'anonymous', cred: { kind: 'none' }, as: async () => inWs(null) },
    { label: 'anonymous on a public workspace', cred: { kind: 'view-link' }, as: async () => ({ caller: null, workspace: pub.id, viewToken: null, ip }) },
    { label: 'view link', cred: { kind: 'view-link' }, as: async () => inWs(null, viewLink) },
    { label: 'member with read (Public group)', cred: { kind: 'key', membership: 'public', scopes: '*' }, as: async () => inWs(await keyCaller(agents.public.key)) },
    { label: 'trader', cred: { kind: 'key', membership: 'trader', scopes: '*' }, as: async () => inWs(await keyCaller(agents.trader.key)) },
    { label: 'admin (manage)', cred: { kind: 'key', membership: 'admin', scopes: '*' }, as: async () => inWs(await keyCaller(agents.admin.key)) },
    { label: 'workspace owner', cred: { kind: 'key', membership: 'owner', scopes: '*' }, as: async () => inWs(await keyCaller(ws.owner.key)) },
    { label: "another workspace's agent", cred: { kind: 'key', membership: 'outsider', scopes: '*' }, as: async () => inWs(await keyCaller(other.owner.key)) },
    { label: 'admin key limited to workspace:read', cred: { kind: 'key', membership: 'admin', scopes: 'workspace:read' }, as: async () => inWs(await keyCaller(limitedKey)) },
    { label: 'trader key limited to account scopes', cred: { kind: 'key', membership: 'trader', scopes: 'account-only' }, as: async () => inWs(await keyCaller(accountKey)) },
    { label: 'key locked to another workspace', cred: { kind: 'locked-other' }, as: async () => inWs(await keyCaller(lockedKey)) },
    { label: 'session (a trader)', cred: { kind: 'session', membership: 'trader' }, as: async () => inWs(session) },
    { label: 'master key', cred: { kind: 'master' }, as: async () => inWs((await resolveCaller(app.deps, { 'x-api-key': app.masterKey }))!) },
  );
});

afterAll(async () => {
  await app.close();
});

/** The route as the matrix sees it: what its policy rule asks. */
function endpointOf(def: RouteDef<unknown, unknown, unknown>): MatrixEndpoint {
  const rule = def.auth;
  return {
    name: `${def.method} ${def.path}`,
    method: def.method,
    needs: rule.capability ? [rule.capability as Cap] : [],
    scope: rule.scope,
    publicRead: !!rule.anonymousRead,
    identity: !!rule.identity,
    resolvesWorkspace: !!(rule.capability || rule.workspaceOptional || rule.workspaceParam),
    sessionOnly: !!rule.sessionOnly,
    platformOnly: !!rule.platformOnly,
  };
}

/** What runRoute answers the principal, the handler not run and nothing validated: the rule alone. */
async function answer(def: RouteDef<unknown, unknown, unknown>, as: Acting): Promise<{ cell: Cell; details: Record<string, unknown> }> {
  const params: Record<string, string> = def.auth.workspaceParam ? { [def.auth.workspaceParam]: ws.id } : {};
  try {
    await runRoute(app.deps, def, { as, params, query: {}, body: undefined, koa: inProcessContext(as) }, { checkOnly: true, validate: false, limit: false });
    return { cell: '200', details: {} };
  } catch (err) {
    const e = toApiError(err);
    return { cell: cellOf({ status: e.status, body: { code: e.code } }), details: e.details ?? {} };
  }
}

describe('policies', () => {
  it('every route declares a rule exported by a policy file', () => {
    const declared = new Set<AuthRule>();
    for (const policy of Object.values(policies) as Array<Record<string, unknown>>) {
      for (const v of Object.values(policy)) if (v && typeof v === 'object' && 'label' in v) declared.add(v as AuthRule);
    }
    const routes = registeredRoutes();
    expect(routes.length).toBeGreaterThan(100);
    expect(routes.filter((r) => !declared.has(r.auth)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    // The label test is gone: the platform-only routes say so by a flag, and only they.
    expect(routes.filter((r) => r.auth.label === 'platform admin').every((r) => r.auth.platformOnly)).toBe(true);
    expect(routes.filter((r) => r.auth.platformOnly).length).toBeGreaterThanOrEqual(5);
  });

  it('covers every kind of principal and every kind of rule', () => {
    expect(rows.length).toBe(13);
    const labels = new Set(registeredRoutes().map((r) => r.auth.label));
    for (const l of ['-', 'public-read', 'agent/admin', 'agent', 'admin', 'workspace owner', 'identity', 'self/admin', 'self/owner', 'optional', 'session', 'platform admin']) {
      expect(labels).toContain(l);
    }
  });

  it('each route x principal answers what the matrix says of its policy rule', async () => {
    const mismatches: string[] = [];
    const answers = new Map<string, number>();
    for (const row of rows) {
      const as = await row.as();
      for (const def of registeredRoutes()) {
        const want = expected(endpointOf(def), row.cred);
        const got = await answer(def, as);
        answers.set(got.cell, (answers.get(got.cell) ?? 0) + 1);
        if (got.cell !== want) mismatches.push(`${row.label} | ${def.method} ${def.path} (${def.auth.label}): got ${got.cell}, the matrix says ${want}`);
        // A refusal names what was missing (spec §7).
        if (got.cell.endsWith('not_authorized') || got.cell.endsWith('session_required')) expect(got.details.requiredCapabilities).toEqual(expect.any(Array));
        if (got.cell.endsWith('scope_denied')) expect(got.details.requiredScopes).toEqual(expect.any(Array));
      }
    }
    expect(mismatches).toEqual([]);
    // The walk meets every answer the matrix knows, so no column is vacuous.
    for (const cell of ['200', '401 authentication_required', '403 identity_required', '403 not_authorized', '403 scope_denied', '403 workspace_locked', '403 session_required']) {
      expect([cell, answers.get(cell) ?? 0]).toEqual([cell, expect.any(Number)]);
      expect(answers.get(cell)).toBeGreaterThan(0);
    }
  });
});

/**
 * The object-level half of the policies: who may target which participant. The routes run whole
 * (callRoute; reads only), and each answer is the one the policy's own function gives for that
 * caller and target (participants.isSelfOrCreator for self/owner; self, the master key, or manage in
 * the workspace for self/admin).
 */
describe('object-level policies: targeting a participant', () => {
  const SELF_OWNER: AnyRoute[] = [getAgentsByIdKeys, getAgentsByIdLedger, getAgentsByIdNotifications, getAgentsByIdDeposits, getAgentsByIdWithdrawals];
  const SELF_ADMIN: AnyRoute[] = [getAgentsById, getAgentsByIdBalance, getAgentsByIdTrades, getAgentsByIdPositions];

  it('every self/owner and self/admin route answers what the policy function says, for each caller and target', async () => {
    const who = {
      trader: { agentId: agents.trader.id, key: agents.trader.key, manages: false },
      admin: { agentId: agents.admin.id, key: agents.admin.key, manages: true },
      owner: { agentId: ws.owner.id, key: ws.owner.key, manages: true },
      "another workspace's agent": { agentId: other.owner.id, key: other.owner.key, manages: false },
    };
    const targets = {
      "the trader's bot": { id: bot.agentId, parentId: agents.trader.id, createdBy: agents.trader.id },
      'the workspace owner': { id: ws.owner.id, parentId: null, createdBy: null },
      'the admin': { id: agents.admin.id, parentId: null, createdBy: null },
    };
    const mismatches: string[] = [];
    const seen = new Set<string>();
    const run = async (route: AnyRoute, caller: Caller, id: string): Promise<string> => {
      const as: Acting = { caller, workspace: ws.id, viewToken: null, ip };
      try {
        const res = await callRoute(app.deps, route as RouteDef<unknown, unknown, { id: string }>, { as, params: { id }, query: {}, body: undefined, koa: inProcessContext(as) }, { limit: false });
        return String(res.status);
      } catch (err) {
        const e = toApiError(err);
        if (e.code === 'not_authorized') expect(e.details.requiredCapabilities).toEqual(expect.any(Array));
        return `${e.status} ${e.code}`;
      }
    };
    for (const [name, p] of Object.entries(who)) {
      const caller = await keyCaller(p.key);
      for (const [tname, target] of Object.entries(targets)) {
        const self = target.id === p.agentId;
        for (const route of SELF_OWNER) {
          const want = policies.participants.isSelfOrCreator(caller, target) ? '200' : '403 not_authorized';
          const got = await run(route, caller, target.id);
          seen.add(`self/owner ${want}`);
          if (got !== want) mismatches.push(`${name} -> ${tname}: GET ${route.path} got ${got}, the policy says ${want}`);
        }
        for (const route of SELF_ADMIN) {
          // Every target is a member of ws; another participant needs manage there.
          const want = self || p.manages ? '200' : '403 not_authorized';
          const got = await run(route, caller, target.id);
          seen.add(`self/admin ${want}`);
          if (got !== want) mismatches.push(`${name} -> ${tname}: GET ${route.path} got ${got}, the policy says ${want}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    // Both answers met for both rules: the walk is not vacuous.
    expect([...seen].sort()).toEqual(['self/admin 200', 'self/admin 403 not_authorized', 'self/owner 200', 'self/owner 403 not_authorized']);
    // The master key targets anyone.
    const master = (await resolveCaller(app.deps, { 'x-api-key': app.masterKey }))!;
    for (const path of [...SELF_OWNER, ...SELF_ADMIN]) expect(await run(path, master, bot.agentId)).toBe('200');
  });
});

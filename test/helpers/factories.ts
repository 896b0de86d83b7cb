import type { TestApp } from './harness';
import { uniqueName } from './harness';

export interface TestAgent {
  id: string;
  key: string;
  nickname: string;
}
export interface TestWorkspace {
  id: string;
  slug: string;
  owner: TestAgent;
}

export async function registerAgent(app: TestApp, nickname = uniqueName()): Promise<TestAgent> {
  const res = await app.http.post('/api/agents/register').send({ name: nickname, operator: 'ops@example.com' });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.agentId, key: res.body.apiKey, nickname };
}

export async function mint(app: TestApp, agentId: string, amount: number): Promise<void> {
  const res = await app.http.post(`/api/agents/${agentId}/credit`).set('X-API-Key', app.masterKey).send({ amount, reason: 'test' });
  if (res.status !== 200) throw new Error(`mint failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** buildWorkspace(overrides): creates the missing parents (an owner with credits). */
export async function buildWorkspace(
  app: TestApp,
  overrides: { owner?: TestAgent; public?: boolean; name?: string; slug?: string; ownerCredits?: number; defaultLiquidityCredits?: number } = {},
): Promise<TestWorkspace> {
  const owner = overrides.owner ?? (await registerAgent(app));
  if (overrides.ownerCredits !== 0) await mint(app, owner.id, overrides.ownerCredits ?? 100_000);
  const res = await app.http
    .post('/api/workspaces')
    .set('X-Agent-Key', owner.key)
    .send({ name: overrides.name ?? uniqueName('ws'), public: overrides.public ?? false, slug: overrides.slug, defaultLiquidityCredits: overrides.defaultLiquidityCredits });
  if (res.status !== 201) throw new Error(`workspace failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, slug: res.body.slug, owner };
}

export async function joinWorkspace(app: TestApp, ws: TestWorkspace, agent: TestAgent): Promise<void> {
  const res = await app.http.post(`/api/marketplace/${ws.id}/join`).set('X-Agent-Key', agent.key);
  if (res.status !== 200) throw new Error(`join failed: ${res.status} ${JSON.stringify(res.body)}`);
}

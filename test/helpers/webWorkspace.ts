import type { TestApp } from './harness';
import { buildWorkspace, type TestAgent, type TestWorkspace } from './factories';
import { createMetric, marketsOf, trade, trader, type TestMetric } from './markets';

/** What the web pages are opened on: by the browser test (test/integration/web.test.ts) and bench/pages.ts. */
export interface WebWorkspaces {
  /** Public: two metrics with readings, trades on a book, a resting order, a proposal with a gap. */
  ws: TestWorkspace;
  revenue: TestMetric;
  churn: TestMetric;
  /** Revenue's first baseline book: the traded one, with the resting order. */
  marketId: string;
  proposalId: string;
  /** The agent that traded and rests the order. */
  tradingAgent: TestAgent;
  /** Private, with one metric (SecretSauce). */
  hidden: TestWorkspace;
  secret: TestMetric;
}

function answered(what: string, res: { status: number; body: unknown }, ok: (status: number) => boolean = (s) => s === 200): void {
  if (!ok(res.status)) throw new Error(`${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Seed the web pages' workspaces through the HTTP API (readings an hour apart on the app's clock). */
export async function seedWebWorkspaces(app: TestApp): Promise<WebWorkspaces> {
  const ws = await buildWorkspace(app, { public: true, name: 'Acme <Growth> & Co' });
  const revenue = await createMetric(app, ws, { name: 'Revenue', value: 500, description: 'Monthly revenue, thousands' });
  const churn = await createMetric(app, ws, { name: 'Churn', value: 40 });
  for (const [m, v] of [[revenue, 520], [churn, 38], [revenue, 560], [revenue, 540]] as const) {
    app.clock.advance(3_600_000);
    answered('reading', await app.http.put(`/api/metrics/${m.id}`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ value: v }));
  }
  const marketId = (await marketsOf(app, ws, revenue.id)).filter((m) => m.proposalId === null)[0].id;
  const tradingAgent = await trader(app, ws, 5000);
  for (const [direction, amount] of [['higher', 20], ['lower', 5], ['higher', 12]] as const) {
    answered('trade', await trade(app, ws, tradingAgent, { marketId, direction, amount }));
  }
  const order = await app.http.post('/api/predictions/orders').set('X-Agent-Key', tradingAgent.key).set('X-Workspace-Id', ws.id).send({ marketId, direction: 'higher', limit: 400, shares: 10 });
  answered('resting order', order, (s) => s < 300);
  const p = await app.http.post('/api/proposals').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ title: 'Ship the <new> onboarding', description: 'Shorter signup.', metricIds: [revenue.id], liquidity: 20 });
  answered('proposal', p, (s) => s === 200 || s === 201);
  const approved = p.body.conditionalMarkets.find((m: { branch: string }) => m.branch === 'approved');
  answered('trade on the approved branch', await trade(app, ws, tradingAgent, { marketId: approved.id, direction: 'higher', amount: 15 }));

  const hidden = await buildWorkspace(app, { public: false, name: 'Skunkworks' });
  const secret = await createMetric(app, hidden, { name: 'SecretSauce', value: 300 });
  return { ws, revenue, churn, marketId, proposalId: p.body.id, tradingAgent, hidden, secret };
}

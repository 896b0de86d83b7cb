import { buildWorkspace, registerAgent } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

/**
 * Issue 28 item 5: a refusal names the way out. The instance runs with the webhook defaults
 * (https only, no private addresses) so the refusals are the ones a deployment gives.
 */
let app: TestApp;
useTestApp((a) => (app = a), {}, { workers: false });

beforeAll(() => {
  const now = new Date();
  app.clock.set(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 15, 12)));
});

describe('webhook refusals name the setting or the valid values', () => {
  const post = (ws: { id: string; owner: { key: string } }, body: object) => app.http.post('/api/hooks').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send(body);

  it('an http URL names WEBHOOK_ALLOW_HTTP; a private address names WEBHOOK_ALLOW_PRIVATE', async () => {
    const ws = await buildWorkspace(app);
    const http = await post(ws, { url: 'http://hooks.example.com/in', events: ['trade:executed'] });
    expect(http.status).toBe(400);
    expect(http.body.code).toBe('validation_failed');
    expect(http.body.error).toBe('The hook url must be https. An http URL is accepted only when the instance runs with WEBHOOK_ALLOW_HTTP=true (local development).');
    for (const url of ['https://127.0.0.1/in', 'https://10.1.2.3/in', 'https://localhost/in', 'https://169.254.169.254/latest']) {
      const res = await post(ws, { url, events: ['trade:executed'] });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('WEBHOOK_ALLOW_PRIVATE=true');
      expect(res.body.error).not.toContain('WEBHOOK_ALLOW_HTTP');
    }
    expect((await post(ws, { url: 'not a url', events: ['trade:executed'] })).body.error).toBe('The hook url is not a valid URL.');
  });

  it('an unknown event type lists the valid ones, in either subscription form', async () => {
    const ws = await buildWorkspace(app);
    for (const events of [['trade:exectued'], [{ type: 'trade:exectued' }], ['market:created', 'nope']]) {
      const res = await post(ws, { url: 'https://hooks.example.com/in', events });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      for (const t of ['market:created', 'market:resolved', 'trade:executed', 'metric:updated', 'proposal:status_changed']) expect(res.body.error).toContain(t);
    }
  });
});

describe('a trade that names its market wrongly is told the target dates that exist', () => {
  it('a metric without targetDate, and a targetDate without a book, list the open books\' dates', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 400 });
    // In the order the books resolve (issue 56: 2027-05 before 2027, which ends in December).
    const dates = (await marketsOf(app, ws, metric.id))
      .filter((m) => !m.proposalId)
      .sort((a, b) => String(a.resolvesOn).localeCompare(String(b.resolvesOn)))
      .map((m) => m.targetDate as string);
    expect(dates.length).toBeGreaterThan(0);
    const t = await trader(app, ws, 50);

    const noDate = await trade(app, ws, t, { metricName: metric.name, direction: 'higher', amount: 1 });
    expect(noDate.status).toBe(400);
    expect(noDate.body.code).toBe('validation_failed');
    expect(noDate.body.error).toBe(`Name a book by targetDate as well as metricName. The open books of ${metric.name} are for targetDate ${dates.join(', ')}.`);

    const noBook = await trade(app, ws, t, { metricId: metric.id, targetDate: '2031-01', direction: 'higher', amount: 1 });
    expect(noBook.status).toBe(404);
    expect(noBook.body.code).toBe('market_not_found');
    expect(noBook.body.error).toBe(`No market on ${metric.id} for 2031-01. The open books of ${metric.id} are for targetDate ${dates.join(', ')}.`);

    const unknown = await trade(app, ws, t, { metricName: 'no-such-metric', targetDate: dates[0], direction: 'higher', amount: 1 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toContain('no-such-metric has no open book');
  });

  it('a proposal branch without targetDate lists that branch\'s dates', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 600 });
    const t = await trader(app, ws, 100);
    const p = await app.http.post('/api/proposals').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id).send({ title: 'Ship it', liquidity: 4 });
    expect(p.status).toBe(200);
    const branchDates = (p.body.conditionalMarkets as Array<{ metricId: string; branch: string; targetDate: string }>)
      .filter((m) => m.metricId === metric.id && m.branch === 'declined')
      .map((m) => m.targetDate)
      .sort();
    expect(branchDates.length).toBeGreaterThan(0);
    const res = await trade(app, ws, t, { metricName: metric.name, proposalId: p.body.id, branch: 'declined', direction: 'lower', amount: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(
      `Name a book of proposal ${p.body.id} (declined branch) by targetDate as well as metricName. The open books of ${metric.name} on the declined branch of proposal ${p.body.id} are for targetDate ${branchDates.join(', ')}.`,
    );
  });
});

describe('crediting yourself', () => {
  it('is refused with the two ways credits come in', async () => {
    const ws = await buildWorkspace(app);
    const res = await app.http.post(`/api/agents/${ws.owner.id}/credit`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ amount: 5 });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
    expect(res.body.error).toContain('POST /agents/{id}/deposit');
    expect(res.body.error).toContain('platform operator or another manager of the workspace (POST /agents/{id}/credit)');
    // Crediting someone else still works: the refusal is about the target, not the caller.
    const other = await registerAgent(app);
    const add = await app.http.post('/api/groups').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ name: 'readers', capabilities: ['read'], members: [other.id] });
    expect(add.status).toBe(201);
    const ok = await app.http.post(`/api/agents/${other.id}/credit`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ amount: 5 });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ agentId: other.id, amount: 5, balance: 5, issued: false });
  });
});

import { buildWorkspace } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;
useTestApp((a) => (app = a), { TELEMETRY_RETENTION_DAYS: '30' });

const hdr = (key: string, wsId: string) => ({ 'X-Agent-Key': key, 'X-Workspace-Id': wsId });
const MIN = 60_000;
const DAY = 86_400_000;

describe('agent telemetry', () => {
  it('heartbeats and decision traces: pushed by agents, read by admins only, silent agents listed', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const owner = hdr(ws.owner.key, ws.id);
    const metric = await createMetric(app, ws, { value: 400 });
    const [book] = await marketsOf(app, ws, metric.id);
    const bot = await trader(app, ws, 100);
    const other = await trader(app, ws, 100);
    const done = await trade(app, ws, bot, { marketId: book.id, direction: 'higher', amount: 3 });
    expect(done.status).toBe(200);
    const now = app.clock.now().getTime();

    const hb = await app.http
      .post('/api/telemetry/heartbeat')
      .set(hdr(bot.key, ws.id))
      .send({ status: 'ok', lastCycleAt: new Date(now - MIN).toISOString(), nextCycleAt: new Date(now + 5 * MIN).toISOString(), lastCycleOutcome: '1 trade, 2 skips', balance: 97.25 });
    expect(hb.status).toBe(201);
    expect(hb.body).toMatchObject({ agentId: bot.id, status: 'ok', balance: 97.25, lastCycleOutcome: '1 trade, 2 skips' });
    await app.http
      .post('/api/telemetry/heartbeat')
      .set(hdr(other.key, ws.id))
      .send({ status: 'idle', nextCycleAt: new Date(now + 60 * MIN).toISOString() })
      .expect(201);
    for (const bad of [{}, { status: 'sleeping' }, { status: 'ok', nextCycleAt: 'tomorrow' }, { status: 'ok', balance: -1 }, { status: 'ok', lastCycleOutcome: 'x'.repeat(501) }]) {
      expect((await app.http.post('/api/telemetry/heartbeat').set(hdr(bot.key, ws.id)).send(bad)).status).toBe(400);
    }

    const traces = await app.http
      .post('/api/telemetry/decisions')
      .set(hdr(bot.key, ws.id))
      .send({
        decisions: [
          { marketId: book.id, outcome: 'trade', reasoning: 'reading 455 above consensus 400', tradeId: done.body.tradeId },
          { marketId: book.id, outcome: 'skip', reasoning: 'spread too thin' },
        ],
      });
    expect(traces.status).toBe(201);
    expect(traces.body.decisions).toEqual([
      expect.objectContaining({ outcome: 'trade', tradeId: done.body.tradeId, marketId: book.id, metricName: metric.name }),
      expect.objectContaining({ outcome: 'skip', tradeId: null }),
    ]);
    // All or none: someone else's trade, an unknown market, an over-long reasoning.
    const notMine = await app.http.post('/api/telemetry/decisions').set(hdr(other.key, ws.id)).send({ decisions: [{ marketId: book.id, outcome: 'trade', reasoning: 'x', tradeId: done.body.tradeId }] });
    expect(notMine.status).toBe(400);
    const unknown = await app.http
      .post('/api/telemetry/decisions')
      .set(hdr(other.key, ws.id))
      .send({ decisions: [{ marketId: book.id, outcome: 'skip', reasoning: 'ok' }, { marketId: '00000000-0000-4000-8000-000000000000', outcome: 'error', reasoning: 'gone' }] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('market_not_found');
    expect((await app.http.post('/api/telemetry/decisions').set(hdr(other.key, ws.id)).send({ decisions: [{ marketId: book.id, outcome: 'skip', reasoning: 'r'.repeat(501) }] })).status).toBe(400);
    expect((await app.http.post('/api/telemetry/decisions').set(hdr(other.key, ws.id)).send({ decisions: [] })).status).toBe(400);

    // Admin-only reads.
    for (const path of ['/telemetry/agents', '/telemetry/silent', `/telemetry/agents/${bot.id}/heartbeats`, `/telemetry/agents/${bot.id}/decisions`, '/telemetry/decisions']) {
      const refused = await app.http.get(`/api${path}`).set(hdr(bot.key, ws.id));
      expect({ path, status: refused.status }).toEqual({ path, status: 403 });
      expect((await app.http.get(`/api${path}`).set({ 'X-Workspace-Id': ws.id })).status).toBe(401);
    }
    const beats = await app.http.get(`/api/telemetry/agents/${bot.id}/heartbeats`).set(owner);
    expect(beats.status).toBe(200);
    expect(beats.body).toHaveLength(1);
    const decisions = await app.http.get(`/api/telemetry/agents/${bot.id}/decisions`).set(owner);
    expect(decisions.body.map((d: any) => d.outcome)).toEqual(['skip', 'trade']);
    const skips = await app.http.get(`/api/telemetry/decisions?outcome=skip`).set(owner);
    expect(skips.body.every((d: any) => d.outcome === 'skip')).toBe(true);
    const page = await app.http.get(`/api/telemetry/decisions?limit=1&before=${decisions.body[0].id}`).set(owner);
    expect(page.body.map((d: any) => d.id)).toEqual([decisions.body[1].id]);

    let agents = await app.http.get('/api/telemetry/agents').set(owner);
    expect(agents.body.map((a: any) => [a.agentId, a.silent]).sort()).toEqual([[bot.id, false], [other.id, false]].sort());
    expect((await app.http.get('/api/telemetry/silent').set(owner)).body).toEqual([]);

    // Ten minutes on: the bot is past its nextCycleAt with no heartbeat, the other is not.
    app.clock.advance(10 * MIN);
    const silent = await app.http.get('/api/telemetry/silent').set(owner);
    expect(silent.body).toEqual([expect.objectContaining({ agentId: bot.id, silent: true, overdueSeconds: expect.any(Number) })]);
    expect(silent.body[0].overdueSeconds).toBeGreaterThanOrEqual(299);
    agents = await app.http.get('/api/telemetry/agents?silent=1').set(owner);
    expect(agents.body.map((a: any) => a.agentId)).toEqual([bot.id]);
    // A new heartbeat brings it back.
    await app.http.post('/api/telemetry/heartbeat').set(hdr(bot.key, ws.id)).send({ status: 'ok', nextCycleAt: new Date(app.clock.now().getTime() + 5 * MIN).toISOString() }).expect(201);
    expect((await app.http.get('/api/telemetry/silent').set(owner)).body).toEqual([]);
  });

  it('the retention purge deletes old traces and heartbeats but keeps each agent’s latest heartbeat', async () => {
    const ws = await buildWorkspace(app);
    const owner = hdr(ws.owner.key, ws.id);
    const metric = await createMetric(app, ws, { value: 100 });
    const [book] = await marketsOf(app, ws, metric.id);
    const send = (status: string) => app.http.post('/api/telemetry/heartbeat').set(owner).send({ status, nextCycleAt: new Date(app.clock.now().getTime() + MIN).toISOString() }).expect(201);
    await send('ok');
    await send('degraded');
    await app.http.post('/api/telemetry/decisions').set(owner).send({ decisions: [{ marketId: book.id, outcome: 'skip', reasoning: 'old' }] }).expect(201);
    app.clock.advance(20 * DAY);
    await app.http.post('/api/telemetry/decisions').set(owner).send({ decisions: [{ marketId: book.id, outcome: 'skip', reasoning: 'recent' }] }).expect(201);
    app.clock.advance(11 * DAY); // the first rows are 31 days old, the recent trace 11

    const run = await app.deps.hub.enqueueAndWait('telemetry', 'purge', {}, { waitMs: 20_000, jobId: `purge-test-${Date.now()}` });
    expect(run.finished).toBe(true);
    if (run.finished) expect(run.result.heartbeats).toBeGreaterThanOrEqual(1);
    const beats = await app.http.get(`/api/telemetry/agents/${ws.owner.id}/heartbeats`).set(owner);
    expect(beats.body.map((b: any) => b.status)).toEqual(['degraded']);
    const traces = await app.http.get(`/api/telemetry/agents/${ws.owner.id}/decisions`).set(owner);
    expect(traces.body.map((d: any) => d.reasoning)).toEqual(['recent']);
    // The silent view still knows the agent.
    expect((await app.http.get('/api/telemetry/silent').set(owner)).body.map((a: any) => a.agentId)).toEqual([ws.owner.id]);
  });
});

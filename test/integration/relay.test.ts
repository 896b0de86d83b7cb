import { cronTable } from '../../jobs/cron';
import { JobHub } from '../../jobs/hub';
import { relayOutbox } from '../../src/services/events';
import { buildWorkspace } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;
useTestApp((a) => (app = a));

describe('the outbox relay', () => {
  it('publishes committed events to the workspace stream once, in order, and marks them', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 300 });
    const [book] = await marketsOf(app, ws, metric.id);
    const t = await trader(app, ws, 20);
    const done = await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 2 });
    expect(done.status).toBe(200);
    const pending = await app.deps.ds.query(`SELECT id, type FROM outbox WHERE workspace_id = $1 AND published_at IS NULL ORDER BY id`, [ws.id]);
    expect(pending.map((r: any) => r.type)).toEqual(expect.arrayContaining(['market:created', 'trade:executed']));
    await relayOutbox(app.deps);
    const stream = `${app.prefix}:events:${ws.id}`;
    const entries = await app.deps.redis.xrange(stream, '-', '+');
    const fields = entries.map(([, f]) => Object.fromEntries(Array.from({ length: f.length / 2 }, (_, i) => [f[2 * i], f[2 * i + 1]])));
    expect(fields.map((f) => f.id)).toEqual(pending.map((r: any) => String(r.id)));
    const tradeEvent = fields.find((f) => f.type === 'trade:executed')!;
    expect(JSON.parse(tradeEvent.data)).toMatchObject({ marketId: book.id, agentId: t.id, direction: 'higher' });
    const left = await app.deps.ds.query(`SELECT count(*)::int AS n FROM outbox WHERE workspace_id = $1 AND published_at IS NULL`, [ws.id]);
    expect(left[0].n).toBe(0);
    await relayOutbox(app.deps);
    expect(await app.deps.redis.xlen(stream)).toBe(entries.length);
  });
});

describe('the cron table', () => {
  it('every entry enqueues a declared job, deduplicated by its job id', async () => {
    // A hub of its own with no workers: unscoped passes must not run over the shared test database.
    const prefix = `${app.prefix}cron`;
    const hub = new JobHub({ redisUrl: app.deps.config.redisUrl, prefix, lanes: 2 });
    try {
      // Both fires at one instant (a real clock could cross a minute between them).
      const at = new Date('2026-11-22T10:30:15Z');
      for (const entry of cronTable) {
        const first = await entry.fire(hub, at);
        const again = await entry.fire(hub, at);
        expect(first.id).toBeTruthy();
        expect(again.id).toBe(first.id);
        const [job] = await hub.queue(first.queueName).getJobs(['waiting', 'prioritized', 'delayed']);
        expect(job?.id).toBe(first.id);
      }
    } finally {
      await hub.close();
      const keys = await app.deps.redis.keys(`${prefix}:*`);
      if (keys.length) await app.deps.redis.del(...keys);
    }
    expect(cronTable.map((e) => e.name).sort()).toEqual(['horizons-hourly', 'horizons-minute', 'outbox-relay', 'purge-requests', 'resolve-due']);
  });
});

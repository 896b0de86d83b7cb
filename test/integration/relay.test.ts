import { cronTable } from '../../jobs/cron';
import { JobHub } from '../../jobs/hub';
import { sequenceEvents } from '../../src/services/events';
import { buildWorkspace } from '../helpers/factories';
import { dropQueueData, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';
import { waitFor } from '../helpers/services';

let app: TestApp;
useTestApp((a) => (app = a));

describe('the event sequencer', () => {
  it('gives committed events their place in the log once, in order, and marks them', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 300 });
    const [book] = await marketsOf(app, ws, metric.id);
    const t = await trader(app, ws, 20);
    const done = await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 2 });
    expect(done.status).toBe(200);
    // A pass finds the lock taken while another pass (this app's pump, or another suite's on the
    // shared database) runs, or may take older rows first: pass until this workspace's rows are in.
    const read = () => app.deps.ds.query(`SELECT id, seq::text AS seq, type, data, published_at FROM outbox WHERE workspace_id = $1 ORDER BY id`, [ws.id]);
    await waitFor('every row sequenced', async () => {
      await sequenceEvents(app.deps);
      return (await read()).every((r: any) => r.seq !== null);
    });
    const rows = await read();
    expect(rows.map((r: any) => r.type)).toEqual(expect.arrayContaining(['market:created', 'trade:executed']));
    // Every row sequenced and marked, seqs increase with the insert order here (one writer at a time).
    expect(rows.every((r: any) => r.seq !== null && r.published_at !== null)).toBe(true);
    const seqs = rows.map((r: any) => BigInt(r.seq));
    expect([...seqs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(seqs);
    const tradeEvent = rows.find((r: any) => r.type === 'trade:executed')!;
    expect(tradeEvent.data).toMatchObject({ marketId: book.id, agentId: t.id, direction: 'higher' });
    const again = await sequenceEvents(app.deps);
    const after = await app.deps.ds.query(`SELECT seq::text AS seq FROM outbox WHERE workspace_id = $1 ORDER BY id`, [ws.id]);
    expect(after.map((r: any) => r.seq)).toEqual(rows.map((r: any) => r.seq));
    expect(again.workspaceIds).not.toContain(ws.id);
  });
});

describe('the cron table', () => {
  it('every entry enqueues a declared job, deduplicated by its job id', async () => {
    // A hub of its own with no workers: unscoped passes must not run over the shared test database.
    const prefix = `${app.prefix}cron`;
    const hub = new JobHub({ ...app.deps.hub.opts, prefix, lanes: 2 });
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
      await dropQueueData(app.deps, prefix);
    }
    expect(cronTable.map((e) => e.name).sort()).toEqual(['deletions-sweep', 'expire-orders', 'horizons-hourly', 'horizons-minute', 'outbox-relay', 'purge-events', 'purge-requests', 'purge-telemetry', 'resolve-due', 'standings-sweep']);
  });
});

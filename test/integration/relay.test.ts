import { cronTable } from '../../jobs/cron';
import { JobHub } from '../../jobs/hub';
import { makeDataSource } from '../../src/db/dataSource';
import { inTransaction } from '../../src/db/tx';
import { emitEvent, sequenceEvents } from '../../src/services/events';
import { buildWorkspace } from '../helpers/factories';
import { dropQueueData, outboxNumbersHeld, sequenceWorkspace, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';
import { countRoundTrips } from '../helpers/roundTrips';

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
    const read = () => app.deps.ds.query(`SELECT id, seq::text AS seq, type, data, published_at FROM outbox WHERE workspace_id = $1 ORDER BY id`, [ws.id]);
    await sequenceWorkspace(app.deps, ws.id);
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

describe('the event sequencer under a flow', () => {
  it('passes running at once, each in two round trips, number every row once: the numbers handed out stay dense', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const head = async () => BigInt((await app.deps.ds.query(`SELECT last_seq::text AS s FROM event_sequencer WHERE id = 1`))[0].s);
    // Round trips of a pool of its own (the app's pump and workers run on theirs meanwhile): a pipelined burst counts once.
    const url = new URL(app.deps.config.databaseUrl);
    url.searchParams.set('application_name', 'relay_trips');
    const own = makeDataSource(url.toString(), 1);
    await own.initialize();
    const counter = countRoundTrips('relay_trips');
    let emitted = 0;
    try {
      // One pass alone, as the pump runs it under a flow (no probe first): its transaction is two
      // round trips. The app's own pump may hold the lock or take the event first: then again.
      let sequenced = 0;
      for (let i = 0; i < 20 && !sequenced; i++) {
        emitted++;
        await inTransaction(app.deps.ds, (m) => emitEvent(m, ws.id, 'metric:updated', { n: -1 - i }));
        counter.reset();
        sequenced = (await sequenceEvents({ ...app.deps, ds: own }, 2000, { probe: false })).sequenced;
      }
      expect(sequenced).toBeGreaterThan(0);
      expect(counter.trips).toBe(2);
    } finally {
      counter.restore();
      await own.destroy();
    }
    // No suite deletes numbered rows while the numbers are counted (outboxNumbersHeld).
    await outboxNumbersHeld(app.deps, 'count', async () => {
      const before = await head();
      // Four pass loops (as four processes' pumps) while ten writers commit 100 events.
      let writing = true;
      const passes = Array.from({ length: 4 }, async () => {
        let sequenced = 0;
        while (writing) sequenced += (await sequenceEvents(app.deps, 7, { probe: false })).sequenced;
        return sequenced;
      });
      await Promise.all(Array.from({ length: 10 }, async (_, w) => {
        for (let i = 0; i < 10; i++) await inTransaction(app.deps.ds, (m) => emitEvent(m, ws.id, 'metric:updated', { n: w * 10 + i }));
      }));
      const read = () => app.deps.ds.query(`SELECT seq::text AS seq FROM outbox WHERE workspace_id = $1 AND seq IS NOT NULL`, [ws.id]);
      await sequenceWorkspace(app.deps, ws.id);
      writing = false;
      await Promise.all(passes);
      const after = await head();
      // Every number between the two heads belongs to one row (another suite's rows among them): a row numbered twice would leave its first number unused.
      const [{ n }] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM outbox WHERE seq > $1::bigint AND seq <= $2::bigint`, [before.toString(), after.toString()]);
      expect(BigInt(n)).toBe(after - before);
      expect(new Set((await read()).map((r: { seq: string }) => r.seq)).size).toBe(100 + emitted);
    });
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

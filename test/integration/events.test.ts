import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { inTransaction } from '../../src/db/tx';
import { emitEvent, purgeEvents, readFeed, sequenceEvents } from '../../src/services/events';
import { buildWorkspace, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, outboxNumbersHeld, sequenceWorkspace, startTestApp, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';
import { receiver } from '../helpers/receiver';
import { PrivateRedis, waitFor } from '../helpers/services';

let app: TestApp;
useTestApp((a) => (app = a), { EVENTS_POLL_MS: '20', SSE_HEARTBEAT_MS: '200' });

const feed = (path: string, who?: TestAgent, ws?: TestWorkspace) => {
  const req = app.http.get(`/api/events${path}`);
  if (who) req.set('X-Agent-Key', who.key);
  if (ws) req.set('X-Workspace-Id', ws.id);
  return req;
};

async function settledFeed(path: string, who?: TestAgent, ws?: TestWorkspace, min = 1): Promise<any[]> {
  return waitFor(`the feed ${path}`, async () => {
    const res = await feed(path, who, ws);
    expect(res.status).toBe(200);
    return res.body.events.length >= min ? res.body.events : null;
  });
}

describe('GET /events', () => {
  it('anonymous on a public workspace, members across their workspaces, types and an after cursor that pages without gaps', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const priv = await buildWorkspace(app, { owner: ws.owner, public: false });
    const m = await createMetric(app, ws, { value: 300 });
    await createMetric(app, priv, { value: 100 });
    const [book] = await marketsOf(app, ws, m.id);
    const t = await trader(app, ws, 50);
    expect((await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 2 })).status).toBe(200);
    const anon = await settledFeed('?types=trade:executed', undefined, ws);
    expect(anon).toHaveLength(1);
    expect(anon[0]).toMatchObject({ type: 'trade:executed', workspaceId: ws.id, data: { marketId: book.id, agentId: t.id, direction: 'higher', cost: 2 } });
    expect(typeof anon[0].id).toBe('string');
    // The owner, without X-Workspace-Id, reads both of its workspaces; the trader only the public one.
    const mine = (await feed('?limit=500', ws.owner)).body.events;
    expect(new Set(mine.map((e: any) => e.workspaceId))).toEqual(new Set([ws.id, priv.id]));
    const theirs = (await feed('?limit=500', t)).body.events;
    expect(theirs.every((e: any) => e.workspaceId === ws.id)).toBe(true);
    // Paging with a small limit walks the same ids as one big page.
    const all = (await feed('?limit=500', undefined, ws)).body.events.map((e: any) => e.id);
    const paged: string[] = [];
    let after = '0';
    for (;;) {
      const page = (await feed(`?limit=2&after=${after}`, undefined, ws)).body;
      paged.push(...page.events.map((e: any) => e.id));
      after = page.nextCursor;
      if (!page.hasMore) break;
    }
    expect(paged).toEqual(all);
    expect(all.every((id: string, i: number) => i === 0 || BigInt(all[i - 1]) < BigInt(id))).toBe(true);
    // Refusals: a private workspace anonymously, a limit over 500, an unknown type.
    expect((await feed('', undefined, priv)).status).toBe(401);
    expect((await feed('?limit=501', undefined, ws)).status).toBe(400);
    expect((await feed('?types=nope', undefined, ws)).status).toBe(400);
    expect((await feed('')).status).toBe(401);
  });

  it('never skips an event whose transaction commits after a later one (the sequencer orders by visibility, not by insert id)', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const late = new Client({ connectionString: app.deps.config.databaseUrl });
    await late.connect();
    try {
      await late.query('BEGIN');
      // Takes its outbox id first, commits last.
      await late.query(`INSERT INTO outbox (workspace_id, type, data) VALUES ($1, 'metric:updated', '{"n": "late"}')`, [ws.id]);
      await inTransaction(app.deps.ds, (m) => emitEvent(m, ws.id, 'metric:updated', { n: 'early' }));
      await sequenceEvents(app.deps);
      const first = await settledFeed('', undefined, ws);
      expect(first.map((e) => e.data.n)).toEqual(['early']);
      const cursor = first[0].id;
      await late.query('COMMIT');
      const next = await settledFeed(`?after=${cursor}`, undefined, ws);
      expect(next.map((e) => e.data.n)).toEqual(['late']);
      expect(BigInt(next[0].id)).toBeGreaterThan(BigInt(cursor));
    } finally {
      await late.end();
    }
  });

  it('no event for a rolled-back change: a refused trade and a transaction that fails write nothing', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const m = await createMetric(app, ws, { value: 300 });
    const [book] = await marketsOf(app, ws, m.id);
    const poor = await trader(app, ws, 1);
    const refused = await trade(app, ws, poor, { marketId: book.id, direction: 'higher', amount: 5 });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('insufficient_balance');
    await expect(
      inTransaction(app.deps.ds, async (mgr) => {
        await emitEvent(mgr, ws.id, 'trade:executed', { marketId: book.id, rolledBack: true });
        throw new Error('the cause fails after its event was written');
      }),
    ).rejects.toThrow('the cause fails');
    // A committed marker after both: once it is in the feed, anything before it would be too.
    await inTransaction(app.deps.ds, (mgr) => emitEvent(mgr, ws.id, 'metric:updated', { marker: true }));
    await settledFeed('?types=metric:updated', undefined, ws);
    const events = await readFeed(app.deps, { workspaceIds: [ws.id], agentId: null }, { after: '0', limit: 500 });
    expect(events.filter((e) => e.type === 'trade:executed')).toEqual([]);
    expect(events.some((e) => e.data.rolledBack)).toBe(false);
  });
});

/** A minimal SSE client: frames as {id, event, data}, plus comment lines. */
function openStream(path: string, headers: Record<string, string>) {
  const frames: Array<{ id: string; event: string; data: any }> = [];
  const comments: string[] = [];
  const { port } = app.server.address() as AddressInfo;
  let buf = '';
  let status = 0;
  const req = http.get({ host: '127.0.0.1', port, path: `/api/events/stream${path}`, headers }, (res) => {
    status = res.statusCode ?? 0;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const f: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line);
          else {
            const at = line.indexOf(': ');
            if (at > 0) f[line.slice(0, at)] = line.slice(at + 2);
          }
        }
        if (f.id) frames.push({ id: f.id, event: f.event, data: JSON.parse(f.data) });
      }
    });
  });
  req.on('error', () => undefined);
  return { frames, comments, status: () => status, close: () => req.destroy() };
}

describe('retention', () => {
  it('the purge deletes events older than the retention and keeps the rest', async () => {
    const ws = await buildWorkspace(app, { public: true });
    await outboxNumbersHeld(app.deps, 'delete', async () => {
      await inTransaction(app.deps.ds, async (m) => {
        await emitEvent(m, ws.id, 'metric:updated', { age: 'old' });
        await emitEvent(m, ws.id, 'metric:updated', { age: 'new' });
      });
      await sequenceWorkspace(app.deps, ws.id);
      await app.deps.ds.query(`UPDATE outbox SET created_at = now() - interval '31 days' WHERE workspace_id = $1 AND data->>'age' = 'old'`, [ws.id]);
      const r = await purgeEvents(app.deps, 30);
      expect(r.events).toBeGreaterThanOrEqual(1);
    });
    const left = await readFeed(app.deps, { workspaceIds: [ws.id], agentId: null }, { after: '0', limit: 10 });
    expect(left.map((e) => e.data.age)).toEqual(['new']);
  });
});

describe('GET /events/stream', () => {
  it('streams new events with heartbeats, and a reconnect with Last-Event-ID gets everything after it, once', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const headers = { 'X-Workspace-Id': ws.id };
    const s1 = openStream('', headers);
    await waitFor('the stream to open', async () => s1.status() === 200 && s1.comments.length > 0);
    const emit = (n: number) => inTransaction(app.deps.ds, (m) => emitEvent(m, ws.id, 'metric:updated', { n }));
    await emit(1);
    await emit(2);
    await waitFor('two events on the stream', async () => s1.frames.length >= 2);
    await waitFor('a heartbeat', async () => s1.comments.some((c) => c.startsWith(': heartbeat')));
    s1.close();
    const last = s1.frames[1].id;
    expect(s1.frames.map((f) => f.data.data.n)).toEqual([1, 2]);
    expect(s1.frames[0]).toMatchObject({ event: 'metric:updated', data: { type: 'metric:updated', workspaceId: ws.id } });
    // While disconnected.
    await emit(3);
    await emit(4);
    const s2 = openStream('', { ...headers, 'Last-Event-ID': s1.frames[0].id });
    await waitFor('the replay after the last id', async () => s2.frames.length >= 3);
    await emit(5);
    await waitFor('the live event after the replay', async () => s2.frames.length >= 4);
    s2.close();
    expect(s2.frames.map((f) => f.data.data.n)).toEqual([2, 3, 4, 5]);
    const ids = s2.frames.map((f) => f.id);
    expect(BigInt(ids[0])).toBe(BigInt(last));
    expect(new Set(ids).size).toBe(ids.length);
    // A private workspace is refused before any stream opens.
    const priv = await buildWorkspace(app, { public: false });
    const refused = await app.http.get('/api/events/stream').set('X-Workspace-Id', priv.id);
    expect(refused.status).toBe(401);
  });
});

describe('a Redis restart in the middle', () => {
  let redis: PrivateRedis;
  let own: TestApp;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    own = await startTestApp({ REDIS_URL: redis.url, WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCALE: '0.0002', EVENTS_POLL_MS: '20' });
  });
  afterAll(async () => {
    await expectLedgerSound(own.deps);
    await own.close();
    await redis.stop();
  });

  it('loses no event: the feed and a webhook receiver get every one, once, in order', async () => {
    const r = await receiver();
    try {
      const ws = await buildWorkspace(own, { public: true });
      const res = await own.http.post('/api/hooks').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ url: r.url, events: ['metric:updated'] });
      expect(res.status).toBe(201);
      r.secret = res.body.secret;
      const emit = (n: number) => inTransaction(own.deps.ds, (m) => emitEvent(m, ws.id, 'metric:updated', { n }));
      for (let n = 1; n <= 5; n++) await emit(n);
      await redis.restart();
      for (let n = 6; n <= 10; n++) await emit(n);
      await r.until(() => r.got.length >= 10, 'all ten events after the Redis restart', 30_000);
      expect(r.got.map((g) => g.body.data.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(r.got.every((g) => g.verified)).toBe(true);
      const logged = (await own.http.get('/api/events?types=metric:updated').set('X-Workspace-Id', ws.id)).body.events;
      expect(logged.map((e: any) => e.id)).toEqual(r.got.map((g) => g.id));
    } finally {
      await r.down();
    }
  });
});

import { hostname } from 'node:os';
import { lookup } from 'node:dns/promises';
import { postWebhook, urlProblem } from '../../src/services/hooks';
import { inTransaction } from '../../src/db/tx';
import { emitEvent } from '../../src/services/events';
import { buildWorkspace, registerAgent, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { sequenceWorkspace, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';
import { receiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/services';

let app: TestApp;
// Receivers run on loopback over http; the retry schedule runs 5000x faster (5 s -> 1 ms, 2 h -> 1.4 s).
useTestApp((a) => (app = a), { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCALE: '0.0002', EVENTS_POLL_MS: '20' });

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.down();
});

async function listening(): Promise<Receiver> {
  const r = await receiver();
  receivers.push(r);
  return r;
}

const ALL_TYPES = ['market:created', 'market:resolved', 'market:closed', 'metric:updated', 'trade:executed', 'proposal:created', 'proposal:subsidy_skipped', 'proposal:status_changed'];

async function hook(ws: TestWorkspace, who: TestAgent, r: Receiver, events: unknown[]): Promise<any> {
  const res = await app.http.post('/api/hooks').set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id).send({ url: r.url, events });
  expect(res.status).toBe(201);
  expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{40,}={0,2}$/);
  r.secret = res.body.secret;
  return res.body;
}

const ids = (r: Receiver, type?: string) => r.got.filter((g) => !type || g.type === type).map((g) => g.id);
const ascending = (xs: string[]) => xs.every((x, i) => i === 0 || BigInt(xs[i - 1]) < BigInt(x));

async function feedIds(ws: TestWorkspace, types: string, after = '0'): Promise<string[]> {
  const res = await app.http.get(`/api/events?types=${types}&after=${after}&limit=500`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
  expect(res.status).toBe(200);
  return res.body.events.map((e: any) => e.id);
}

describe('webhook delivery', () => {
  it('every §6 event type reaches a verified receiver, once each, in log order, with the spec data fields', async () => {
    const r = await listening();
    const ws = await buildWorkspace(app, { public: true });
    const h = await hook(ws, ws.owner, r, ALL_TYPES);
    const metric = await createMetric(app, ws, { value: 300 });
    const t = await trader(app, ws, 100);
    const [book] = await marketsOf(app, ws, metric.id);
    expect((await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 3 })).status).toBe(200);
    const put = await app.http.put(`/api/metrics/${metric.id}`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ value: 320 });
    expect(put.status).toBe(200);
    const p = await app.http.post('/api/proposals').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id).send({ title: 'Ship it', liquidity: 4 });
    expect(p.status).toBe(200);
    const ok = await app.http.post(`/api/proposals/${p.body.id}/approve`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
    expect(ok.status).toBe(200);
    const settle = await app.http.post(`/api/metrics/${metric.id}/settle`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ value: 350, reason: 'test' });
    expect(settle.status).toBe(200);

    // An owner who cannot pay the subsidy it promised is skipped (proposal:subsidy_skipped), in a workspace of its own.
    const skipR = await listening();
    const broke = await buildWorkspace(app, { public: true, ownerCredits: 0 });
    await hook(broke, broke.owner, skipR, ['proposal:subsidy_skipped']);
    const tp = { enabled: true, halfLife: 1, customHorizons: ['+3m'], horizonCredits: { '+3m': { proposal: 7 } } };
    await createMetric(app, broke, { value: 300, timePreference: tp });
    const proposer = await trader(app, broke, 100);
    const p2 = await app.http.post('/api/proposals').set('X-Agent-Key', proposer.key).set('X-Workspace-Id', broke.id).send({ title: 'Owner is broke', liquidity: 4 });
    expect(p2.status).toBe(200);
    await skipR.until(() => skipR.got.length > 0, 'proposal:subsidy_skipped');
    expect(skipR.got[0]).toMatchObject({ type: 'proposal:subsidy_skipped', verified: true });
    expect(skipR.got[0].body.data).toMatchObject({ proposalId: p2.body.id, skipped: [expect.objectContaining({ contributorId: broke.owner.id, needed: 14, had: 0 })] });

    const TYPES = ALL_TYPES.filter((x) => x !== 'proposal:subsidy_skipped');
    await r.until(() => TYPES.every((type) => r.got.some((g) => g.type === type)), 'every event type');
    const logged = await feedIds(ws, ALL_TYPES.join(','));
    await r.until(() => r.got.length >= logged.length, 'every logged event');
    expect(r.got.every((g) => g.verified)).toBe(true);
    expect(ids(r)).toEqual(logged);
    expect(ascending(ids(r))).toBe(true);
    const first = (type: string) => r.got.find((g) => g.type === type)!.body;
    expect(first('trade:executed')).toMatchObject({ type: 'trade:executed', workspaceId: ws.id, data: { marketId: book.id, metricName: metric.name, agentId: t.id, direction: 'higher', cost: 3 } });
    expect(typeof first('trade:executed').data.newConsensus).toBe('number');
    expect(first('metric:updated').data).toMatchObject({ metricId: metric.id, metricName: metric.name, newValue: 320 });
    expect(first('market:created').data).toEqual(expect.objectContaining({ marketId: expect.any(String), metricName: metric.name, targetDate: expect.any(String) }));
    expect(first('proposal:created').data).toMatchObject({ proposalId: p.body.id, title: 'Ship it', proposedBy: t.id, conditionalMarketCount: expect.any(Number) });
    expect(first('proposal:status_changed').data).toMatchObject({ proposalId: p.body.id, toStatus: 'approved', decidedBy: ws.owner.id });
    expect(first('market:closed').data).toEqual(expect.objectContaining({ marketId: expect.any(String) }));
    expect(first('market:resolved').data).toMatchObject({ metricName: metric.name, actualValue: 350 });
    // The webhook-id is the event id, and the timestamp header is seconds.
    expect(r.got[0].headers['webhook-id']).toBe(r.got[0].body.id);
    expect(r.got[0].headers['webhook-signature']).toMatch(/^v1,/);
    await waitFor('every delivery in the log', async () => {
      const log = await app.http.get(`/api/hooks/${h.id}/deliveries?limit=500`).set('X-Agent-Key', ws.owner.key);
      expect(log.status).toBe(200);
      return log.body.filter((d: any) => d.status === 'delivered').length === r.got.length;
    });
  });

  it('a receiver down for a while gets everything once it is back: once each, in order, head-of-line', async () => {
    const r = await listening();
    const ws = await buildWorkspace(app, { public: true });
    const h = await hook(ws, ws.owner, r, ['trade:executed']);
    const metric = await createMetric(app, ws, { value: 300 });
    const [book] = await marketsOf(app, ws, metric.id);
    const t = await trader(app, ws, 100);
    await r.down();
    for (let i = 0; i < 5; i++) expect((await trade(app, ws, t, { marketId: book.id, direction: i % 2 ? 'lower' : 'higher', amount: 1 })).status).toBe(200);
    // The head event is retrying: the endpoint shows failing, nothing later went out of order.
    let state: any;
    for (let i = 0; i < 200 && state?.status !== 'failing'; i++) {
      state = (await app.http.get(`/api/hooks/${h.id}`).set('X-Agent-Key', ws.owner.key)).body;
      await new Promise((res) => setTimeout(res, 25));
    }
    expect(state.status).toBe('failing');
    const failures = (await app.http.get(`/api/hooks/${h.id}/deliveries`).set('X-Agent-Key', ws.owner.key)).body;
    expect(failures.length).toBeGreaterThan(0);
    expect(new Set(failures.map((d: any) => d.eventId)).size).toBe(1);
    expect(failures.every((d: any) => d.status === 'failed' && d.httpStatus === null)).toBe(true);
    await r.up();
    // The feed shows numbered rows only: the last trades' events may still wait for a pass.
    await sequenceWorkspace(app.deps, ws.id);
    const logged = await feedIds(ws, 'trade:executed');
    expect(logged).toHaveLength(5);
    await r.until(() => r.got.length >= 5, 'all five trades after the receiver came back');
    expect(ids(r)).toEqual(logged);
    expect(r.got.every((g) => g.verified)).toBe(true);
    // The receiver logs a delivery when it arrives; the worker marks the endpoint healthy after the
    // answer, in its own transaction: wait for that state (bounded), then check it.
    let after: any;
    for (let i = 0; i < 200 && after?.status !== 'active'; i++) {
      after = (await app.http.get(`/api/hooks/${h.id}`).set('X-Agent-Key', ws.owner.key)).body;
      if (after.status !== 'active') await new Promise((res) => setTimeout(res, 25));
    }
    expect(after).toMatchObject({ status: 'active', failingSince: null });
  });

  it('410 disables the endpoint, and its owner gets endpoint:disabled', async () => {
    const gone = await listening();
    const watcher = await listening();
    gone.answer = () => ({ status: 410 });
    const ws = await buildWorkspace(app, { public: true });
    const h = await hook(ws, ws.owner, gone, ['market:created']);
    await hook(ws, ws.owner, watcher, ['endpoint:disabled']);
    await createMetric(app, ws, { value: 300 });
    await watcher.until(() => watcher.got.length > 0, 'endpoint:disabled');
    expect(watcher.got[0].body).toMatchObject({ type: 'endpoint:disabled', data: { hookId: h.id, url: gone.url } });
    expect(watcher.got[0].verified).toBe(true);
    const state = (await app.http.get(`/api/hooks/${h.id}`).set('X-Agent-Key', ws.owner.key)).body;
    expect(state.status).toBe('disabled');
    expect(state.disabledReason).toMatch(/410/);
    expect(gone.attempts).toHaveLength(1);
    // Another participant never sees the owner's endpoint:disabled.
    const other = await trader(app, ws, 0);
    const feed = await app.http.get('/api/events?types=endpoint:disabled').set('X-Agent-Key', other.key).set('X-Workspace-Id', ws.id);
    expect(feed.body.events).toEqual([]);
  });

  it('429 with Retry-After waits as long as the receiver asked, then delivers', async () => {
    const r = await listening();
    r.answer = (_m, n) => (n === 0 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200 });
    const ws = await buildWorkspace(app, { public: true });
    const h = await hook(ws, ws.owner, r, ['market:created']);
    await createMetric(app, ws, { value: 300 });
    await r.until(() => r.got.length > 0, 'the delivery after Retry-After');
    expect(r.attempts[1].at - r.attempts[0].at).toBeGreaterThanOrEqual(1900);
    expect(r.attempts[1].id).toBe(r.attempts[0].id);
    // The log row of a success is written just after the receiver's answer.
    const head = await waitFor('both attempts in the log', async () => {
      const log = (await app.http.get(`/api/hooks/${h.id}/deliveries`).set('X-Agent-Key', ws.owner.key)).body;
      const rows = log.filter((d: any) => d.eventId === r.attempts[0].id);
      return rows.length >= 2 ? rows : null;
    });
    expect(head.map((d: any) => [d.status, d.httpStatus, d.attempt])).toEqual([
      ['delivered', 200, 2],
      ['backoff', 429, 1],
    ]);
  });

  it('filters: metric:updated by name or id, and the notification switches', async () => {
    const byName = await listening();
    const byId = await listening();
    const props = await listening();
    const comments = await listening();
    const ws = await buildWorkspace(app, { public: true });
    const m1 = await createMetric(app, ws, { value: 100 });
    const m2 = await createMetric(app, ws, { value: 200 });
    const t = await trader(app, ws, 100);
    await hook(ws, t, byName, [{ type: 'metric:updated', metricNames: [m1.name.toUpperCase()] }]);
    await hook(ws, t, byId, [{ type: 'metric:updated', metricIds: [m2.id] }]);
    await hook(ws, t, props, ['proposal:created', 'proposal:status_changed']);
    await hook(ws, t, comments, ['proposal:commented']);
    const sw = await app.http.put(`/api/agents/me/notifications`).set('X-Agent-Key', t.key).send({ newProposal: false });
    expect(sw.status).toBe(200);
    expect(sw.body.notifications).toMatchObject({ newProposal: false, contractDecided: true, anyComment: false });
    for (const [m, v] of [
      [m1, 110],
      [m2, 210],
    ] as const) {
      expect((await app.http.put(`/api/metrics/${m.id}`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ value: v })).status).toBe(200);
    }
    const p = await app.http.post('/api/proposals').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ title: 'Filtered', liquidity: 2 });
    expect(p.status).toBe(200);
    await app.http.post(`/api/proposals/${p.body.id}/decline`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).expect(200);
    const say = (who: TestAgent, body: Record<string, unknown>) =>
      app.http.post(`/api/proposals/${p.body.id}/comments`).set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id).send(body).expect(201);
    await say(ws.owner, { body: 'not about t' });
    const mine = await say(t, { body: 'by t' });
    const reply = await say(ws.owner, { body: 'a reply to t', parentId: mine.body.id });
    await comments.until(() => comments.got.length > 0, 'the reply to t');
    // anyComment is off by default: only the reply to t's comment reaches t's hook.
    expect(comments.got.map((g) => g.body.data)).toEqual([expect.objectContaining({ commentId: reply.body.id, parentAuthorId: t.id, authorId: ws.owner.id })]);
    await byName.until(() => byName.got.length > 0, 'm1 update');
    await byId.until(() => byId.got.length > 0, 'm2 update');
    await props.until(() => props.got.length > 0, 'the decision');
    // Later events were delivered, so the earlier ones had been settled (in-order delivery).
    expect(byName.got.map((g) => g.body.data.metricId)).toEqual([m1.id]);
    expect(byId.got.map((g) => g.body.data.metricId)).toEqual([m2.id]);
    expect(props.got.map((g) => g.type)).toEqual(['proposal:status_changed']);
    const bad = await app.http.post('/api/hooks').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id).send({ url: byName.url, events: [{ type: 'trade:executed', metricNames: ['x'] }] });
    expect(bad.status).toBe(400);
  });

  it('an endpoint whose owner lost read in a private workspace is disabled, and gets nothing more', async () => {
    const r = await listening();
    const ws = await buildWorkspace(app, { public: false });
    const t = await registerAgent(app);
    const owner = { 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id };
    const groups = (await app.http.get('/api/groups').set(owner)).body;
    const traders = groups.find((g: any) => g.name === 'Trader');
    await app.http.post(`/api/groups/${traders.id}/members`).set(owner).send({ agentId: t.id }).expect(200);
    const h = await hook(ws, t, r, ['metric:updated']);
    const emit = (n: number) => inTransaction(app.deps.ds, (m) => emitEvent(m, ws.id, 'metric:updated', { n }));
    // A busy log (another workspace's events every 20 ms) must not keep one delivery run going past
    // the owner's loss of read: each run re-checks it.
    const other = await buildWorkspace(app, { public: true });
    let busy = true;
    const noise = (async () => {
      while (busy) {
        await inTransaction(app.deps.ds, (m) => emitEvent(m, other.id, 'metric:updated', { noise: true }));
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    await emit(1);
    await r.until(() => r.got.length === 1, 'the event while the owner reads');
    await app.http.delete(`/api/groups/${traders.id}/members/${t.id}`).set(owner).expect(200);
    // Out of its groups, a member still reads through the Public group; the membership itself goes too (no route removes it yet).
    await app.deps.ds.query(`DELETE FROM memberships WHERE workspace_id = $1 AND agent_id = $2`, [ws.id, t.id]);
    expect((await app.http.get('/api/events').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id)).status).toBe(403);
    await emit(2);
    try {
      await waitFor('the hook disabled', async () => (await app.http.get(`/api/hooks/${h.id}`).set('X-Agent-Key', t.key)).body.status === 'disabled');
    } finally {
      busy = false;
      await noise;
    }
    expect(r.got.map((g) => g.body.data.n)).toEqual([1]);
  });

  it('rotation: old and new secrets both sign; replay re-sends a range in order; test and retry log manual deliveries', async () => {
    const r = await listening();
    const ws = await buildWorkspace(app, { public: true });
    const h = await hook(ws, ws.owner, r, ['market:created']);
    const oldSecret = r.secret;
    const rot = await app.http.post(`/api/hooks/${h.id}/rotate-secret`).set('X-Agent-Key', ws.owner.key);
    expect(rot.status).toBe(200);
    expect(rot.body.secret).not.toBe(oldSecret);
    expect(rot.body.secretRotatingUntil).not.toBeNull();
    await createMetric(app, ws, { value: 300 });
    let created: string[] = [];
    for (let i = 0; i < 200 && !created.length; i++) created = await feedIds(ws, 'market:created');
    await r.until(() => r.got.length >= created.length, 'the deliveries after rotation');
    expect(r.got[0].verified).toBe(true); // verified with the old secret
    r.secret = rot.body.secret;
    const test = await app.http.post(`/api/hooks/${h.id}/test`).set('X-Agent-Key', ws.owner.key);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ status: 'delivered', httpStatus: 200, manual: true, eventType: 'webhook:test' });
    const probe = r.got.find((g) => g.type === 'webhook:test')!;
    expect(probe).toMatchObject({ type: 'webhook:test', verified: true });
    expect(probe.headers['webhook-signature'].split(' ')).toHaveLength(2);
    const n = created.length;
    const replay = await app.http.post(`/api/hooks/${h.id}/replay`).set('X-Agent-Key', ws.owner.key).send({ after: 0 });
    expect(replay.status).toBe(202);
    await r.until(() => r.got.filter((g) => g.type === 'market:created').length >= 2 * n, 'the replayed range');
    const all = ids(r, 'market:created');
    expect(all).toEqual([...created, ...created]);
    const [last] = (await app.http.get(`/api/hooks/${h.id}/deliveries?limit=1`).set('X-Agent-Key', ws.owner.key)).body;
    const again = await app.http.post(`/api/hooks/${h.id}/deliveries/${last.id}/retry`).set('X-Agent-Key', ws.owner.key);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'delivered', manual: true, eventId: last.eventId });
    // Someone else's hook is not found.
    const stranger = await trader(app, ws, 0);
    expect((await app.http.get(`/api/hooks/${h.id}`).set('X-Agent-Key', stranger.key)).status).toBe(404);
    expect((await app.http.delete(`/api/hooks/${h.id}`).set('X-Agent-Key', ws.owner.key)).status).toBe(204);
  });
});

describe('no server-side request forgery', () => {
  const policy = { allowHttp: true, allowPrivate: false, timeoutMs: 2000 };

  it('refuses loopback, private, link-local, metadata and a name resolving to loopback, before connecting', async () => {
    const r = await listening();
    const name = (await lookup(hostname()).catch(() => null))?.address.startsWith('127.') ? hostname() : 'localhost';
    const port = r.portNumber;
    const table = [`http://127.0.0.1:${port}/`, `http://[::1]:${port}/`, 'http://10.1.2.3/', 'http://169.254.169.254/latest/meta-data/', 'http://192.168.1.1/', 'http://[::ffff:127.0.0.1]/', `http://${name}:${port}/`];
    for (const url of table) {
      const res = await postWebhook(url, {}, '{}', policy);
      expect({ url, status: res.status, refused: /loopback|private|Refused/.test(res.error ?? '') }).toEqual({ url, status: null, refused: true });
    }
    expect(r.attempts).toHaveLength(0);
    expect(urlProblem('http://example.com/', { allowHttp: false, allowPrivate: false })).toBe('must be https');
    expect(urlProblem('https://example.com/', { allowHttp: false, allowPrivate: false })).toBeNull();
    expect(urlProblem('https://10.0.0.1/', { allowHttp: false, allowPrivate: false })).toMatch(/private/);
  });

  it('never follows a redirect (to loopback or anywhere): a 3xx is a failed attempt', async () => {
    const target = await listening();
    const redirector = await listening();
    redirector.answer = () => ({ status: 302, headers: { Location: target.url } });
    const res = await postWebhook(redirector.url, {}, '{}', { ...policy, allowPrivate: true });
    expect(res.status).toBe(302);
    expect(target.attempts).toHaveLength(0);
  });
});

describe('an endpoint that keeps failing', () => {
  let own: TestApp;
  // "5 days" shortened to 1 s; the schedule's fifth attempt comes about 1.9 s after the first.
  useTestApp((a) => (own = a), { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCALE: '0.0002', WEBHOOK_DISABLE_AFTER_MS: '1000' });

  it('is disabled once its failures outlast the limit, and its owner gets endpoint:disabled', async () => {
    const broken = await listening();
    const watcher = await listening();
    broken.answer = () => ({ status: 500, body: 'x'.repeat(5000) });
    const ws = await buildWorkspace(own, { public: true });
    const post = async (r: Receiver, events: string[]) => {
      const res = await own.http.post('/api/hooks').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ url: r.url, events });
      expect(res.status).toBe(201);
      r.secret = res.body.secret;
      return res.body;
    };
    const h = await post(broken, ['market:created']);
    await post(watcher, ['endpoint:disabled']);
    await createMetric(own, ws, { value: 300 });
    await watcher.until(() => watcher.got.length > 0, 'endpoint:disabled');
    expect(watcher.got[0].body.data).toMatchObject({ hookId: h.id, reason: expect.stringMatching(/kept failing/) });
    const state = (await own.http.get(`/api/hooks/${h.id}`).set('X-Agent-Key', ws.owner.key)).body;
    expect(state.status).toBe('disabled');
    // Every attempt was for the same (head) event, at growing intervals; the log keeps 1 KB of each answer.
    expect(new Set(broken.attempts.map((a) => a.id)).size).toBe(1);
    expect(broken.attempts.length).toBeGreaterThanOrEqual(3);
    const gaps = broken.attempts.slice(1).map((a, i) => a.at - broken.attempts[i].at);
    expect(gaps[gaps.length - 1]).toBeGreaterThan(gaps[0]);
    const log = (await own.http.get(`/api/hooks/${h.id}/deliveries`).set('X-Agent-Key', ws.owner.key)).body;
    expect(log.map((d: any) => d.attempt)).toEqual(broken.attempts.map((_, i) => broken.attempts.length - i));
    expect(log.every((d: any) => d.status === 'failed' && d.httpStatus === 500 && d.response.length === 1024)).toBe(true);
    // Enabling resumes where it stopped.
    broken.answer = () => ({ status: 200 });
    const on = await own.http.patch(`/api/hooks/${h.id}`).set('X-Agent-Key', ws.owner.key).send({ enabled: true });
    expect(on.body.status).toBe('active');
    await createMetric(own, ws, { value: 10 });
    await broken.until(() => broken.got.length > 0, 'deliveries after re-enabling');
    expect(broken.got[0].id).toBe(broken.attempts[0].id);
  });
});

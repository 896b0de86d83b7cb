import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { buildWorkspace, mint, registerAgent, type TestAgent } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, type TestMetric } from '../helpers/markets';
import { receiver, type Receiver } from '../helpers/receiver';

/**
 * Hidden means hidden (issue 57 item 2): for generated group permission sets, no channel (the event
 * feed with and without X-Workspace-Id, the stream, a webhook, the data room, the market list, the
 * status summary, the source list) shows a member anything about a metric or source that a direct GET
 * refuses it, and every channel shows what the direct GET allows. An outsider and a key without
 * workspace scopes see nothing of the private workspace anywhere.
 */
let app: TestApp;
useTestApp((a) => (app = a), { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1', EVENTS_POLL_MS: '20' });

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.down();
});

const hdr = (key: string, wsId?: string): Record<string, string> => (wsId ? { 'X-Agent-Key': key, 'X-Workspace-Id': wsId } : { 'X-Agent-Key': key });
const perm = fc.constantFrom<boolean | undefined>(undefined, true, false);
const groupPerms = fc.record({ metrics: fc.tuple(perm, perm, perm), source: perm });
const narrowing = (p: { metrics: (boolean | undefined)[] }, ids: string[]) =>
  Object.fromEntries(p.metrics.flatMap((r, i) => (r === undefined ? [] : [[ids[i], { read: r }]])));

async function head(): Promise<string> {
  const [r] = await app.deps.ds.query(`SELECT last_seq::text AS head FROM event_sequencer WHERE id = 1`);
  return r.head;
}

/** The stream's event ids after `after`, read until `until` (a seq) has been passed by the log the stream reads. */
function streamIds(headers: Record<string, string>, after: string, expectLast: string | null, untilHead: string): Promise<string[]> {
  const url = new URL(`/api/events/stream?after=${after}`, `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  return new Promise((resolve, reject) => {
    const ids: string[] = [];
    const req = http.get(url, { headers }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      let buf = '';
      // Nothing visible after `after`: the stream's first wake has read to the head; a heartbeat-free
      // check is the feed's own answer, so the caller passes expectLast null and gets [] at once.
      if (expectLast === null) {
        req.destroy();
        return resolve(ids);
      }
      res.on('data', (chunk: Buffer) => {
        buf += chunk.toString('utf8');
        for (const m of buf.matchAll(/^id: (\d+)$/gm)) if (!ids.includes(m[1])) ids.push(m[1]);
        if (ids.includes(expectLast) || ids.some((id) => BigInt(id) > BigInt(untilHead))) {
          req.destroy();
          resolve(ids);
        }
      });
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    setTimeout(() => {
      req.destroy();
      resolve(ids);
    }, 15_000).unref();
  });
}

describe('hidden means hidden on every channel', () => {
  it('for generated permission sets, no channel shows a member what a direct GET refuses, nor hides what it allows', async () => {
    const ws = await buildWorkspace(app, { public: false });
    const owner = hdr(ws.owner.key, ws.id);
    const metrics: TestMetric[] = [];
    for (let i = 0; i < 3; i++) metrics.push(await createMetric(app, ws, { value: 100 + i }));
    const mids = metrics.map((m) => m.id);
    const source = (await app.http.post('/api/sources').set(owner).send({ name: 'definitions', type: 'text', content: 'how we count' }).expect(201)).body;
    const member = await registerAgent(app);
    const trader: TestAgent = await registerAgent(app);
    await mint(app, trader.id, 1000);
    const g1 = (await app.http.post('/api/groups').set(owner).send({ name: 'G1', capabilities: ['read'], members: [member.id] }).expect(201)).body;
    const g2 = (await app.http.post('/api/groups').set(owner).send({ name: 'G2', capabilities: ['read'] }).expect(201)).body;
    await app.http.post('/api/groups').set(owner).send({ name: 'Traders', capabilities: ['read', 'trade'], members: [trader.id] }).expect(201);
    const pub = (await app.http.get('/api/groups').set(owner)).body.find((x: any) => x.name === 'Public');
    const outsider = await registerAgent(app);
    // A key of the member's without workspace scopes: it reads nothing of any workspace.
    const unscoped = await app.http.post(`/api/agents/${member.id}/keys`).set(hdr(member.key)).send({ label: 'account only', scopes: ['account:read'] });
    expect(unscoped.status).toBe(201);
    const unscopedKey: string = unscoped.body.apiKey;

    const r = await receiver();
    receivers.push(r);
    const hook = await app.http.post('/api/hooks').set(hdr(member.key, ws.id)).send({ url: r.url, events: ['metric:updated', 'trade:executed', 'market:created'] });
    expect(hook.status).toBe(201);
    r.secret = hook.body.secret;
    let run = 0;

    await fc.assert(
      fc.asyncProperty(fc.record({ g1: groupPerms, g2: groupPerms, pub: groupPerms, inG1: fc.boolean(), inG2: fc.boolean() }), async (p) => {
        run++;
        const src = (x: boolean | undefined) => (x === undefined ? {} : { [source.id]: { read: x } });
        await app.http.put(`/api/groups/${g1.id}`).set(owner).send({ metricPermissions: narrowing(p.g1, mids), sourcePermissions: src(p.g1.source) }).expect(200);
        await app.http.put(`/api/groups/${g2.id}`).set(owner).send({ metricPermissions: narrowing(p.g2, mids), sourcePermissions: src(p.g2.source) }).expect(200);
        await app.http.put(`/api/groups/${pub.id}`).set(owner).send({ metricPermissions: narrowing(p.pub, mids), sourcePermissions: src(p.pub.source) }).expect(200);
        for (const [g, inIt] of [[g1, p.inG1], [g2, p.inG2]] as const) {
          const listed = (await app.http.get(`/api/groups/${g.id}`).set(owner)).body.members.some((m: any) => m.id === member.id);
          if (inIt && !listed) await app.http.post(`/api/groups/${g.id}/members`).set(owner).send({ agentId: member.id }).expect(200);
          if (!inIt && listed) await app.http.delete(`/api/groups/${g.id}/members/${member.id}`).set(owner).expect(200);
        }

        // Acts on every metric: a reading (metric:updated, a data-room row) and a trade on a book.
        const before = await head();
        for (const [i, m] of metrics.entries()) {
          await app.http.put(`/api/metrics/${m.id}`).set(owner).send({ value: 200 + run * 10 + i, updateNote: `run ${run}` }).expect(200);
          const [book] = await marketsOf(app, ws, m.id);
          expect((await trade(app, ws, trader, { marketId: book.id, direction: 'higher', amount: 1 })).status).toBe(200);
        }
        const after = await head();

        // What a direct GET allows the member.
        const readable = new Set<string>();
        for (const id of mids) {
          const got = await app.http.get(`/api/metrics/${id}`).set(hdr(member.key, ws.id));
          expect([200, 404]).toContain(got.status);
          if (got.status === 200) readable.add(id);
        }
        const sourceText = await app.http.get(`/api/sources/${source.id}/text`).set(hdr(member.key, ws.id));
        expect([200, 403, 404]).toContain(sourceText.status);

        // The owner's view of the same events, each with its metric.
        const ownerFeed = ((await app.http.get(`/api/events?after=${before}&limit=500`).set(owner).expect(200)).body.events as any[]).filter((e) => BigInt(e.id) <= BigInt(after));
        const books: Array<{ id: string; metric_id: string }> = await app.deps.ds.query(`SELECT id, metric_id FROM markets WHERE workspace_id = $1`, [ws.id]);
        const metricOf = (e: any): string | null => e.data.metricId ?? books.find((b) => b.id === e.data.marketId)?.metric_id ?? null;
        const expected = ownerFeed.filter((e) => !metricOf(e) || readable.has(metricOf(e)!)).map((e) => e.id);
        expect(ownerFeed.some((e) => metricOf(e))).toBe(true);

        // Feed, named and unnamed.
        const named = (await app.http.get(`/api/events?after=${before}&limit=500`).set(hdr(member.key, ws.id)).expect(200)).body;
        expect(named.events.map((e: any) => e.id).filter((id: string) => BigInt(id) <= BigInt(after))).toEqual(expected);
        const unnamed = (await app.http.get(`/api/events?after=${before}&limit=500`).set(hdr(member.key)).expect(200)).body;
        expect(unnamed.events.filter((e: any) => e.workspaceId === ws.id && BigInt(e.id) <= BigInt(after)).map((e: any) => e.id)).toEqual(expected);
        // Paging by one never shows more.
        const paged: string[] = [];
        let cursor = before;
        for (let i = 0; i < 50; i++) {
          const page = (await app.http.get(`/api/events?after=${cursor}&limit=1`).set(hdr(member.key, ws.id)).expect(200)).body;
          paged.push(...page.events.map((e: any) => e.id));
          if (!page.hasMore || BigInt(page.nextCursor) >= BigInt(after)) break;
          cursor = page.nextCursor;
        }
        expect(paged.filter((id) => BigInt(id) <= BigInt(after))).toEqual(expected);

        // The stream.
        const streamed = await streamIds(hdr(member.key, ws.id), before, expected.length ? expected[expected.length - 1] : null, after);
        expect(streamed.filter((id) => BigInt(id) <= BigInt(after))).toEqual(expected);

        // The webhook: once its cursor passed the acts, it got exactly the visible events of its types.
        const until = Date.now() + 15_000;
        for (;;) {
          const h = (await app.http.get(`/api/hooks/${hook.body.id}`).set(hdr(member.key)).expect(200)).body;
          if (BigInt(h.lastEventId) >= BigInt(after)) break;
          if (Date.now() > until) throw new Error(`hook cursor ${h.lastEventId} did not reach ${after}`);
          await new Promise((res) => setTimeout(res, 20));
        }
        const hookTypes = ['metric:updated', 'trade:executed', 'market:created'];
        const delivered = r.got.map((g) => g.id).filter((id) => BigInt(id) > BigInt(before) && BigInt(id) <= BigInt(after));
        expect(delivered).toEqual(ownerFeed.filter((e) => hookTypes.includes(e.type) && expected.includes(e.id)).map((e) => e.id));

        // The data room, the market list and the status summary.
        const room = (await app.http.get('/api/data-room/actions?limit=200').set(hdr(member.key, ws.id)).expect(200)).body.actions as any[];
        for (const a of room) if (a.metricId) expect(readable.has(a.metricId)).toBe(true);
        for (const id of readable) expect(room.some((a) => a.metricId === id && a.kind === 'reading' && a.note === `run ${run}`)).toBe(true);
        const listed = (await app.http.get('/api/predictions/markets?limit=200').set(hdr(member.key, ws.id)).expect(200)).body as any[];
        expect(new Set(listed.map((mk) => mk.metricId))).toEqual(readable);
        const metricList = (await app.http.get('/api/metrics').set(hdr(member.key, ws.id)).expect(200)).body as any[];
        expect(new Set(metricList.map((m) => m.id))).toEqual(readable);
        const status = (await app.http.get('/api/status').set(hdr(member.key, ws.id)).expect(200)).body;
        expect(new Set(status.metrics.map((m: any) => m.id))).toEqual(readable);
        const sources = (await app.http.get('/api/sources').set(hdr(member.key, ws.id)).expect(200)).body as any[];
        expect(sources.some((s) => s.id === source.id)).toBe(sourceText.status === 200);

        // An outsider and a key without workspace scopes: nothing of the workspace anywhere.
        expect((await app.http.get(`/api/metrics/${mids[0]}`).set(hdr(outsider.key, ws.id))).status).toBe(403);
        expect((await app.http.get(`/api/events?after=${before}`).set(hdr(outsider.key, ws.id))).status).toBe(403);
        const outsiderFeed = (await app.http.get(`/api/events?after=${before}&limit=500`).set(hdr(outsider.key)).expect(200)).body.events as any[];
        expect(outsiderFeed.filter((e) => e.workspaceId === ws.id)).toEqual([]);
        expect((await app.http.get(`/api/metrics/${mids[0]}`).set(hdr(unscopedKey, ws.id))).status).toBe(403);
        const unscopedFeed = await app.http.get(`/api/events?after=${before}&limit=500`).set(hdr(unscopedKey));
        expect(unscopedFeed.status === 200 ? unscopedFeed.body.events.filter((e: any) => e.workspaceId === ws.id) : []).toEqual([]);
      }),
      { numRuns: 8, endOnFailure: true },
    );
  });
});

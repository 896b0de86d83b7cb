import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { balanceOf, createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;

useTestApp((a) => (app = a));
afterEach(async () => {
  await expectLedgerSound(app.deps);
});

const at = (iso: string) => app.clock.set(new Date(iso));
const owner = (ws: TestWorkspace) => ({ 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id });
const put = (ws: TestWorkspace, id: string, body: object) => app.http.put(`/api/metrics/${id}`).set(owner(ws)).send(body);
const refresh = (ws: TestWorkspace) => app.http.post('/api/predictions/markets/refresh').set(owner(ws)).send({ force: true });
const resolve = (ws: TestWorkspace) => app.http.post('/api/predictions/resolve').set(owner(ws)).send({});
const market = async (ws: TestWorkspace, id: string) => (await app.http.get(`/api/predictions/markets/${id}`).set(owner(ws))).body;
const minuteOnly = { enabled: true, halfLife: 1, customHorizons: ['+1min', '+2min'] };

async function minuteBooks(ws: TestWorkspace, metricId: string) {
  return (await marketsOf(app, ws, metricId)).filter((m) => m.targetDate.includes(':'));
}

describe('minute horizons', () => {
  it('roll forward minute by minute and each resolves on the last reading inside its minute', async () => {
    at('2026-11-21T10:00:30Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 500, timePreference: minuteOnly });
    const first = await minuteBooks(ws, metric.id);
    expect(first.map((m) => m.targetDate).sort()).toEqual(['2026-11-21T10:01', '2026-11-21T10:02']);
    const t = await trader(app, ws, 100);
    const book1 = first.find((m) => m.targetDate === '2026-11-21T10:01')!;
    const buy = await trade(app, ws, t, { marketId: book1.id, direction: 'higher', amount: 10 });
    expect(buy.status).toBe(200);

    at('2026-11-21T10:01:10Z');
    expect((await put(ws, metric.id, { value: 580 })).status).toBe(200);
    at('2026-11-21T10:01:50Z');
    expect((await put(ws, metric.id, { value: 620 })).status).toBe(200); // the last reading inside 10:01 wins
    const r1 = await refresh(ws);
    expect(r1.status).toBe(200);
    expect((await minuteBooks(ws, metric.id)).map((m) => m.targetDate).sort()).toEqual(['2026-11-21T10:01', '2026-11-21T10:02', '2026-11-21T10:03']);

    at('2026-11-21T10:02:05Z');
    const res = await resolve(ws);
    expect(res.status).toBe(200);
    expect(res.body.resolved).toEqual([book1.id]);
    const done = await market(ws, book1.id);
    expect(done).toMatchObject({ status: 'resolved', resolved: true, resolvedValue: 620 });
    const expected = Math.floor(buy.body.shares * 0.62 * 1e9) / 1e9;
    expect(await balanceOf(app, t)).toBeCloseTo(100 - buy.body.cost + expected, 6);
    const events = await app.deps.ds.query(`SELECT data FROM outbox WHERE type = 'market:resolved' AND data->>'marketId' = $1`, [book1.id]);
    expect(events[0].data).toMatchObject({ actualValue: 620, targetDate: '2026-11-21T10:01' });

    at('2026-11-21T10:03:01Z');
    await put(ws, metric.id, { value: 640, asOf: '2026-11-21T10:02:30Z' }); // filed late, dated inside 10:02
    await refresh(ws);
    const again = await resolve(ws);
    expect(again.body.resolved).toHaveLength(1);
    expect((await minuteBooks(ws, metric.id)).map((m) => m.targetDate).sort()).toEqual(['2026-11-21T10:03', '2026-11-21T10:04', '2026-11-21T10:05']);
  });

  it('an untraded stale date is voided and its pool returned when the horizons change', async () => {
    at('2026-11-21T11:00:10Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 500, timePreference: minuteOnly });
    const before = await balanceOf(app, ws.owner);
    const res = await put(ws, metric.id, { timePreference: { enabled: true, halfLife: 1, customHorizons: ['+1min'] } });
    expect(res.status).toBe(200);
    const live = await minuteBooks(ws, metric.id);
    expect(live.map((m) => m.targetDate)).toEqual(['2026-11-21T11:01']);
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(before + 100, 6);
  });
});

describe('voids with refunds', () => {
  it('the settlement lag passes with no reading inside the period: voided after a day, every net cost back', async () => {
    at('2026-11-21T12:00:30Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 500, timePreference: { enabled: true, halfLife: 1, customHorizons: ['+1min'] } });
    const [book] = await minuteBooks(ws, metric.id);
    const t = await trader(app, ws, 100);
    await trade(app, ws, t, { marketId: book.id, direction: 'lower', amount: 12 });
    at('2026-11-21T12:05:00Z');
    expect((await resolve(ws)).body.waiting).toContain(book.id);
    expect((await market(ws, book.id)).status).toBe('open');
    at('2026-11-22T12:01:59Z');
    expect((await resolve(ws)).body.waiting).toContain(book.id);
    at('2026-11-22T12:02:00Z');
    expect((await resolve(ws)).body.voided).toContain(book.id);
    expect(await market(ws, book.id)).toMatchObject({ status: 'voided' });
    expect(await balanceOf(app, t)).toBeCloseTo(100, 9);
    const refused = await trade(app, ws, t, { marketId: book.id, direction: 'lower', amount: 1 });
    expect(refused.body.code).toBe('market_voided');
  });

  it('an N/A reading on the fixing voids the book', async () => {
    at('2026-11-21T13:00:30Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 500, timePreference: { enabled: true, halfLife: 1, customHorizons: ['+1min'] } });
    const [book] = await minuteBooks(ws, metric.id);
    const t = await trader(app, ws, 50);
    await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 5 });
    at('2026-11-21T13:01:20Z');
    expect((await put(ws, metric.id, { na: true })).status).toBe(200);
    at('2026-11-21T13:02:00Z');
    expect((await resolve(ws)).body.voided).toEqual([book.id]);
    expect((await market(ws, book.id)).voidReason).toMatch(/N\/A/);
    expect(await balanceOf(app, t)).toBeCloseTo(50, 9);
  });

  it('resolvesNaUntilMeasured voids while no reading exists, and the first reading ends that for good', async () => {
    at('2026-11-21T14:00:30Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 0, resolvesNaUntilMeasured: true, timePreference: { enabled: true, halfLife: 1, customHorizons: ['+1min', '+3min'] } });
    const books = await minuteBooks(ws, metric.id);
    const first = books.find((b) => b.targetDate.endsWith('14:01'))!;
    const later = books.find((b) => b.targetDate.endsWith('14:03'))!;
    at('2026-11-21T14:02:00Z');
    const r = await resolve(ws);
    expect(r.body.voided).toEqual([first.id]);
    expect((await market(ws, first.id)).voidReason).toMatch(/no logged reading/);
    at('2026-11-21T14:02:30Z');
    await put(ws, metric.id, { value: 300 });
    at('2026-11-21T14:04:00Z');
    const r2 = await resolve(ws);
    // Measured now, but nothing dated inside 14:03: it waits for a reading instead of voiding.
    expect(r2.body.waiting).toContain(later.id);
  });
});

describe('early settlement and until-settled', () => {
  it('settles every open book at the supplied value; a second call settles nothing; until-settled reopens at the next refresh', async () => {
    at('2026-11-21T15:00:00Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 400, timePreference: { enabled: true, halfLife: 1, customHorizons: ['until-settled'] } });
    const books = await marketsOf(app, ws, metric.id);
    const us = books.find((b) => b.targetDate === 'until-settled');
    expect(us).toMatchObject({ resolvesOn: '9999-12-31T00:00:00Z' });
    const t = await trader(app, ws, 100);
    const buy = await trade(app, ws, t, { marketId: us.id, direction: 'higher', amount: 20 });
    const noReason = await app.http.post(`/api/metrics/${metric.id}/settle`).set(owner(ws)).send({ value: 700 });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error).toMatch(/reason/);
    const future = await app.http.post(`/api/metrics/${metric.id}/settle`).set(owner(ws)).send({ value: 700, reason: 'x', asOf: '2026-11-21T15:02:00Z' });
    expect(future.status).toBe(400);
    const s = await app.http.post(`/api/metrics/${metric.id}/settle`).set(owner(ws)).send({ value: 1700, reason: 'launched early' });
    expect(s.status).toBe(200);
    expect(s.body.count).toBe(books.length);
    expect(s.body.settled.sort()).toEqual(books.map((b) => b.id).sort());
    const paid = Math.floor(buy.body.shares * 1e9) / 1e9; // 1700 clamps to the range max: higher pays 1
    expect(s.body.totalPayout).toBeCloseTo(paid, 6);
    expect(await balanceOf(app, t)).toBeCloseTo(100 - buy.body.cost + paid, 6);
    const ev = await app.deps.ds.query(`SELECT data FROM outbox WHERE type = 'market:resolved' AND data->>'marketId' = $1`, [us.id]);
    expect(ev[0].data).toMatchObject({ settledEarly: true, reason: 'launched early' });
    const again = await app.http.post(`/api/metrics/${metric.id}/settle`).set(owner(ws)).send({ value: 10, reason: 'again' });
    expect(again.body).toMatchObject({ count: 0, settled: [], totalPayout: 0 });
    await refresh(ws);
    const reopened = (await marketsOf(app, ws, metric.id)).filter((b) => b.targetDate === 'until-settled');
    expect(reopened).toHaveLength(1);
    expect(reopened[0].id).not.toBe(us.id);
    expect(reopened[0].status).toBe('open');
  });
});

describe('metric changes', () => {
  it('a range change voids and respawns untraded books; a traded book keeps its opening range', async () => {
    at('2026-11-21T16:00:00Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 500 });
    const books = await marketsOf(app, ws, metric.id);
    const t = await trader(app, ws, 100);
    await trade(app, ws, t, { marketId: books[0].id, direction: 'higher', amount: 5 });
    const res = await put(ws, metric.id, { marketRangeMax: 2000 });
    expect(res.status).toBe(200);
    const after = await marketsOf(app, ws, metric.id);
    expect(after).toHaveLength(books.length);
    const kept = after.find((b) => b.id === books[0].id);
    expect(kept.rangeMax).toBe(1000);
    const fresh = after.filter((b) => b.id !== books[0].id);
    expect(fresh.every((b) => b.rangeMax === 2000)).toBe(true);
    expect(fresh.every((b) => !books.some((o) => o.id === b.id))).toBe(true);
    // The respawned books open where the traded book stands (a traded open book wins).
    expect(fresh[0].prediction).toBeCloseTo(kept.prediction, 6);
  });

  it('a formula change respawns when every book is untraded, and is 409 once a book is traded', async () => {
    at('2026-11-21T16:30:00Z');
    const ws = await buildWorkspace(app, { public: true });
    const base = await createMetric(app, ws, { value: 100 });
    const metric = await createMetric(app, ws, { value: 50 });
    const before = await marketsOf(app, ws, metric.id);
    const ok = await put(ws, metric.id, { formula: `{${base.name}} * 2` });
    expect(ok.status).toBe(200);
    const after = await marketsOf(app, ws, metric.id);
    expect(after.every((b) => !before.some((o) => o.id === b.id))).toBe(true);
    expect(after[0].prediction).toBeCloseTo(250, 6);
    const t = await trader(app, ws, 10);
    await trade(app, ws, t, { marketId: after[0].id, direction: 'lower', amount: 1 });
    const refused = await put(ws, metric.id, { formula: `{${base.name}} * 3` });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/trade/);
    const del = await app.http.delete(`/api/metrics/${metric.id}`).set(owner(ws));
    expect(del.status).toBe(409);
  });

  it('backfill is 409 once the metric has a resolved book; deleting an untraded metric returns its pools', async () => {
    at('2026-11-21T17:00:00Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 10 });
    const settled = await app.http.post(`/api/metrics/${metric.id}/settle`).set(owner(ws)).send({ value: 12, reason: 'done' });
    expect(settled.status).toBe(200);
    const bf = await app.http.post(`/api/metrics/${metric.id}/logs/backfill`).set(owner(ws)).send({ readings: [{ at: '2020-01-01T00:00:00Z', value: 1 }] });
    expect(bf.status).toBe(409);
    const other = await createMetric(app, ws, { value: 10 });
    const before = await balanceOf(app, ws.owner);
    const n = (await marketsOf(app, ws, other.id)).length;
    expect((await app.http.delete(`/api/metrics/${other.id}`).set(owner(ws))).status).toBe(204);
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(before + 100 * n, 6);
  });
});

describe('idempotent spawning', () => {
  it('two concurrent refreshes open nothing twice and charge the owner once', async () => {
    at('2026-11-21T18:00:00Z');
    const ws = await buildWorkspace(app, { public: true });
    const metric = await createMetric(app, ws, { value: 10, timePreference: { enabled: true, halfLife: 1, customHorizons: ['+1min'] } });
    at('2026-11-21T18:03:30Z');
    const before = await balanceOf(app, ws.owner);
    const [a, b] = await Promise.all([refresh(ws), refresh(ws)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const live = await minuteBooks(ws, metric.id);
    const dates = live.map((m) => m.targetDate);
    expect(new Set(dates).size).toBe(dates.length);
    expect(dates).toContain('2026-11-21T18:04');
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(before - 100, 6);
  });
});

describe('pending proposals follow the dates', () => {
  it('a refresh in a new month opens the missing branch pair, paid again by the proposer', async () => {
    at('2026-11-21T19:00:00Z');
    const ws = await buildWorkspace(app, { public: true });
    await createMetric(app, ws, { value: 500 });
    const t = await trader(app, ws, 100);
    const created = await app.http.post('/api/proposals').set({ 'X-Agent-Key': t.key, 'X-Workspace-Id': ws.id }).send({ title: 'Ship it', liquidity: 5 });
    expect(created.status).toBe(200);
    expect(created.body.conditionalMarkets.map((m: any) => m.targetDate)).toEqual(['2026-11', '2026-11']);
    expect(await balanceOf(app, t)).toBeCloseTo(90, 9);
    at('2026-12-02T00:00:00Z');
    const r = await refresh(ws);
    expect(r.body.proposalBranches).toBe(2);
    const again = await refresh(ws);
    expect(again.body.proposalBranches).toBe(0);
    const p = await app.http.get(`/api/proposals/${created.body.id}`).set({ 'X-Agent-Key': t.key, 'X-Workspace-Id': ws.id });
    const dates = p.body.conditionalMarkets.map((m: any) => `${m.targetDate}/${m.branch}`).sort();
    expect(dates).toEqual(['2026-11/approved', '2026-11/declined', '2026-12/approved', '2026-12/declined']);
    expect(await balanceOf(app, t)).toBeCloseTo(80, 9);
  });
});

describe('the funder never loses more than the liquidity', () => {
  it.each([0, 137, 500, 999, 1000, 4000])('random trading then settlement at %d', async (value) => {
    at('2026-11-21T20:00:00Z');
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 1000 });
    const metric = await createMetric(app, ws, { value: 400, timePreference: { enabled: true, halfLife: 1, customHorizons: ['until-settled'] } });
    const books = await marketsOf(app, ws, metric.id);
    const ownerBefore = await balanceOf(app, ws.owner);
    const traders = await Promise.all([0, 1, 2, 3].map(() => trader(app, ws, 300)));
    let seed = value + 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 40; i++) {
      const t = traders[Math.floor(rnd() * traders.length)];
      const book = books[Math.floor(rnd() * books.length)];
      const r = rnd();
      const body =
        r < 0.45 ? { direction: 'higher', amount: 1 + Math.floor(rnd() * 60) } : r < 0.9 ? { direction: 'lower', amount: 1 + Math.floor(rnd() * 60) } : { targetValue: Math.floor(rnd() * 1000), maxBudget: 80 };
      await trade(app, ws, t, { marketId: book.id, ...body });
    }
    const s = await app.http.post(`/api/metrics/${metric.id}/settle`).set(owner(ws)).send({ value, reason: 'property check' });
    expect(s.body.count).toBe(books.length);
    const ownerAfter = await balanceOf(app, ws.owner);
    // The owner paid every book's liquidity at open (before ownerBefore was read) and got each pool's
    // remainder back: its loss over the whole life of the books is at most what it funded.
    const funded = books.reduce((sum, b) => sum + b.liquidity, 0);
    const ownerLoss = ownerBefore + funded - ownerAfter;
    expect(ownerLoss).toBeLessThanOrEqual(funded + 1e-9);
    const traderTotal = (await Promise.all(traders.map((t) => balanceOf(app, t)))).reduce((a, b) => a + b, 0);
    // Credits are conserved among the owner, the traders and the (now empty) pools.
    const pools = await app.deps.ds.query(`SELECT coalesce(sum(balance), 0)::text AS s FROM accounts WHERE id = ANY($1)`, [books.map((b) => `pool:${b.id}`)]);
    expect(pools[0].s).toBe('0');
    expect(traderTotal + ownerAfter).toBeCloseTo(1200 + ownerBefore + funded, 6);
  });
});

import { buildWorkspace, mint, registerAgent, joinWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { balanceOf, createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;
useTestApp((a) => (app = a));

const hdr = (key: string, wsId: string) => ({ 'X-Agent-Key': key, 'X-Workspace-Id': wsId });

describe('manual markets', () => {
  it('POST /predictions/markets opens a book outside the plan, paid by the caller; the horizon pass keeps it', async () => {
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 1000 });
    const owner = hdr(ws.owner.key, ws.id);
    const metric = await createMetric(app, ws, { value: 300, timePreference: { enabled: true, halfLife: 1 } });
    const planned = (await marketsOf(app, ws, metric.id)).map((m: any) => m.targetDate);
    const before = await balanceOf(app, ws.owner);

    const res = await app.http.post('/api/predictions/markets').set(owner).send({ metricId: metric.id, targetDate: '2031-03-04', liquidity: 50, title: 'By March 4th 2031?' });
    expect(res.status).toBe(201);
    expect(planned).not.toContain('2031-03-04');
    expect(res.body).toMatchObject({ metricId: metric.id, targetDate: '2031-03-04', manual: true, funded: true, liquidity: 50, title: 'By March 4th 2031?', status: 'open' });
    expect(res.body.consensus).toBeCloseTo(300, 0);
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(before - 50, 6);

    expect((await app.http.post('/api/predictions/markets').set(owner).send({ metricId: metric.id, targetDate: '2031-03-04' })).status).toBe(409);
    expect((await app.http.post('/api/predictions/markets').set(owner).send({ metricId: metric.id, targetDate: '2020-01' })).status).toBe(400);
    expect((await app.http.post('/api/predictions/markets').set(owner).send({ metricId: metric.id, targetDate: 'next tuesday' })).status).toBe(400);
    expect((await app.http.post('/api/predictions/markets').set(owner).send({ metricId: '00000000-0000-4000-8000-000000000000', targetDate: '2031-03' })).status).toBe(404);
    const t = await trader(app, ws, 10);
    const refused = await app.http.post('/api/predictions/markets').set(hdr(t.key, ws.id)).send({ metricId: metric.id, targetDate: '2031-03' });
    expect(refused.status).toBe(403);

    // Too poor: nothing is created. liquidity 0: an unfunded book anyone may fund.
    const poor = await app.http.post('/api/predictions/markets').set(owner).send({ metricId: metric.id, targetDate: '2032', liquidity: 1_000_000 });
    expect(poor.status).toBe(400);
    expect(poor.body.code).toBe('insufficient_balance');
    expect((await marketsOf(app, ws, metric.id)).map((m: any) => m.targetDate)).not.toContain('2032');
    const unfunded = await app.http.post('/api/predictions/markets').set(owner).send({ metricId: metric.id, targetDate: '2032', liquidity: 0 });
    expect(unfunded.status).toBe(201);
    expect(unfunded.body).toMatchObject({ funded: false, consensus: null, manual: true });

    // The horizon pass (forced) leaves manual books alone.
    const r = await app.http.post('/api/predictions/markets/refresh').set(owner).send({ force: true });
    expect(r.status).toBe(200);
    const after = await app.http.get(`/api/predictions/markets/${res.body.id}`).set(owner);
    expect(after.body).toMatchObject({ status: 'open', voidReason: null });
    await expectLedgerSound(app.deps);
  });

  it('POST /predictions/markets/{id}/void refunds every position and the pool on the market’s lane, with a published reason', async () => {
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 500 });
    const owner = hdr(ws.owner.key, ws.id);
    const metric = await createMetric(app, ws, { value: 500, timePreference: null });
    const ownerBefore = await balanceOf(app, ws.owner);
    const opened = await app.http.post('/api/predictions/markets').set(owner).send({ metricId: metric.id, targetDate: '2030-06', liquidity: 100 });
    expect(opened.status).toBe(201);
    const a = await trader(app, ws, 40);
    const b = await trader(app, ws, 40);
    expect((await trade(app, ws, a, { marketId: opened.body.id, direction: 'higher', amount: 25 })).status).toBe(200);
    expect((await trade(app, ws, b, { marketId: opened.body.id, direction: 'lower', amount: 10 })).status).toBe(200);
    expect((await trade(app, ws, a, { marketId: opened.body.id, direction: 'higher', sellShares: 5 })).status).toBe(200);
    expect(await balanceOf(app, a)).toBeLessThan(40);

    const bystander = await registerAgent(app);
    await mint(app, bystander.id, 1);
    await joinWorkspace(app, ws, bystander);
    expect((await app.http.post(`/api/predictions/markets/${opened.body.id}/void`).set(hdr(bystander.key, ws.id)).send({ reason: 'x' })).status).toBe(403);
    expect((await app.http.post(`/api/predictions/markets/${opened.body.id}/void`).set(owner).send({})).status).toBe(400);
    expect((await app.http.post(`/api/predictions/markets/${opened.body.id}/void`).set(owner).send({ reason: '   ' })).status).toBe(400);

    const v = await app.http.post(`/api/predictions/markets/${opened.body.id}/void`).set(owner).send({ reason: 'the metric definition changed' });
    expect(v.status).toBe(200);
    expect(v.body.market).toMatchObject({ id: opened.body.id, status: 'voided', voidReason: 'the metric definition changed' });
    expect(v.body.refunded).toBeGreaterThan(0);
    // Each position at its net cost; the pool's remainder back to the funder.
    expect(await balanceOf(app, a)).toBeCloseTo(40, 6);
    expect(await balanceOf(app, b)).toBeCloseTo(40, 6);
    expect(await balanceOf(app, ws.owner)).toBeCloseTo(ownerBefore, 6);

    const again = await app.http.post(`/api/predictions/markets/${opened.body.id}/void`).set(owner).send({ reason: 'twice' });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('market_voided');
    const late = await trade(app, ws, a, { marketId: opened.body.id, direction: 'higher', amount: 1 });
    expect(late.body.code).toBe('market_voided');

    const room = await app.http.get('/api/data-room/actions?kind=void').set(owner);
    expect(room.body.actions).toEqual(expect.arrayContaining([expect.objectContaining({ marketId: opened.body.id, reason: 'the metric definition changed' })]));

    // A proposal branch is voided by deciding its proposal.
    const p = await app.http.post('/api/proposals').set(hdr(a.key, ws.id)).send({ title: 'Branches', liquidity: 0 });
    expect(p.status).toBe(200);
    const branch = p.body.conditionalMarkets[0];
    const refusedBranch = await app.http.post(`/api/predictions/markets/${branch.id}/void`).set(owner).send({ reason: 'no' });
    expect(refusedBranch.status).toBe(409);
    expect((await app.http.post('/api/predictions/markets/00000000-0000-4000-8000-000000000000/void').set(owner).send({ reason: 'x' })).status).toBe(404);
    await expectLedgerSound(app.deps);
  });

  it('POST /predictions/markets/refresh without force runs at most once a minute per workspace', async () => {
    const ws = await buildWorkspace(app);
    const other = await buildWorkspace(app);
    const owner = hdr(ws.owner.key, ws.id);
    expect((await app.http.post('/api/predictions/markets/refresh').set(owner).send({})).status).toBe(200);
    const second = await app.http.post('/api/predictions/markets/refresh').set(owner).send({});
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: 'rate_limited', bucket: 'refresh', windowSeconds: 60 });
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(second.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Another workspace is not held back; force always runs.
    expect((await app.http.post('/api/predictions/markets/refresh').set(hdr(other.owner.key, other.id)).send({})).status).toBe(200);
    expect((await app.http.post('/api/predictions/markets/refresh').set(owner).send({ force: true })).status).toBe(200);
    expect((await app.http.post('/api/predictions/markets/refresh').set(owner).send({ force: false })).status).toBe(429);
    app.clock.advance(61_000);
    expect((await app.http.post('/api/predictions/markets/refresh').set(owner).send({})).status).toBe(200);
  });
});

import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { workspaceClient } from '../helpers/metricClient';
import { useTestApp, type TestApp } from '../helpers/harness';

let app: TestApp;
useTestApp((a) => (app = a), { CREDIT_VALUE_USD: '0.02' });

const { as, create } = workspaceClient(() => app);

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Readings an hour apart ending `endAgoMs` before now, oldest first, filed through PUT with asOf. */
async function fileSeries(ws: TestWorkspace, id: string, values: number[], endAgoMs = 0) {
  const now = app.clock.now().getTime();
  const stamps: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const at = new Date(now - endAgoMs - (values.length - 1 - i) * HOUR);
    stamps.push(Math.floor(at.getTime() / 1000));
    await as(ws).put(`/metrics/${id}`, { value: values[i], asOf: at.toISOString() }).expect(200);
  }
  return stamps;
}

describe('GET /status', () => {
  it('summarises every metric with creditValueUsd', async () => {
    const ws = await buildWorkspace(app);
    await create(ws, { name: 'Rev', value: 10 });
    await create(ws, { name: 'Cost', value: 4 });
    await create(ws, { name: 'Profit', value: 1, formula: '{Rev} - {Cost}' });
    const res = await as(ws).get('/status');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, creditValueUsd: 0.02, workspace: { id: ws.id } });
    expect(res.body.metrics).toEqual([
      expect.objectContaining({ name: 'Profit', value: 1, total: 7, depth: 0, description: '' }),
      expect.objectContaining({ name: 'Rev', value: 10, total: 10, depth: 1 }),
      expect.objectContaining({ name: 'Cost', value: 4, total: 4, depth: 1 }),
    ]);
    expect(res.body.metrics[0]).not.toHaveProperty('trend');
    expect(res.body.metrics[0]).not.toHaveProperty('markets');
  });

  it('trends: the newest trendsLimit readings, oldest first, as [unixTs, value]', async () => {
    const ws = await buildWorkspace(app);
    const m = await create(ws, { name: 'Series', resolvesNaUntilMeasured: true });
    const values = Array.from({ length: 25 }, (_, i) => i * 1.5);
    const stamps = await fileSeries(ws, m.id, values, 30 * DAY);
    await as(ws).put(`/metrics/${m.id}`, { na: true }).expect(200); // N/A is not charted

    const dflt = await as(ws).get('/status?trends=1');
    const series = dflt.body.metrics[0].trend as Array<[number, number]>;
    expect(series).toHaveLength(20);
    expect(series[19]).toEqual([stamps[24], 36]);
    expect(series[0]).toEqual([stamps[5], 7.5]);
    for (let i = 1; i < series.length; i++) expect(series[i][0]).toBeGreaterThan(series[i - 1][0]);

    const three = await as(ws).get('/status?trends=true&trendsLimit=3');
    expect(three.body.metrics[0].trend.map((p: [number, number]) => p[1])).toEqual([33, 34.5, 36]);
    const ninety = await as(ws).get('/status?trends=1&trendsLimit=90');
    expect(ninety.body.metrics[0].trend).toHaveLength(25);

    for (const q of ['trendsLimit=91', 'trendsLimit=0', 'trendsLimit=abc', 'trends=maybe', 'markets=2']) {
      const bad = await as(ws).get(`/status?trends=1&${q}`);
      expect({ q, status: bad.status }).toEqual({ q, status: 400 });
      expect(bad.body).toMatchObject({ code: 'validation_failed', error: expect.stringMatching(/\.$/) });
    }
  });

  it('markets=1 adds the open baseline books per metric; both flags combine', async () => {
    const ws = await buildWorkspace(app);
    await create(ws, { name: 'Booked', timePreference: { enabled: true, halfLife: 1 } });
    await create(ws, { name: 'Bookless' });
    const res = await as(ws).get('/status?markets=1&trends=1');
    expect(res.status).toBe(200);
    const booked = res.body.metrics.find((x: { name: string }) => x.name === 'Booked');
    const bookless = res.body.metrics.find((x: { name: string }) => x.name === 'Bookless');
    expect(bookless.markets).toEqual([]);
    expect(Array.isArray(booked.markets)).toBe(true);
    expect(booked.markets.length).toBeGreaterThan(0);
    expect(booked.markets[0]).toEqual(expect.objectContaining({ id: expect.any(String), targetDate: expect.any(String), rangeMin: 0, rangeMax: 1000 }));
    expect(booked.trend).toEqual([[expect.any(Number), 0]]);
  });

  it('is public-read: anonymous on a public workspace, 401 on a private one', async () => {
    const pub = await buildWorkspace(app, { public: true });
    await create(pub, { name: 'Open' });
    const anon = await as(pub, null).get('/status?trends=1');
    expect(anon.status).toBe(200);
    expect(anon.body.metrics.map((x: { name: string }) => x.name)).toEqual(['Open']);
    const priv = await buildWorkspace(app);
    expect((await as(priv, null).get('/status')).status).toBe(401);
  });

  it('a metric that resets every day charts only the current day', async () => {
    const ws = await buildWorkspace(app);
    // Last in the file: it leaves the clock fixed.
    app.clock.set(new Date('2026-03-10T15:30:00Z'));
    const daily = await create(ws, { name: 'Daily', resetsEvery: 'day', resolvesNaUntilMeasured: true });
    const plain = await create(ws, { name: 'Plain', resolvesNaUntilMeasured: true });
    for (const id of [daily.id, plain.id]) {
      for (const [at, v] of [['2026-03-09T22:00:00Z', 5], ['2026-03-10T01:00:00Z', 1], ['2026-03-10T09:00:00Z', 2]] as const) {
        await as(ws).put(`/metrics/${id}`, { value: v, asOf: at }).expect(200);
      }
    }
    const res = await as(ws).get('/status?trends=1');
    const byName = Object.fromEntries(res.body.metrics.map((x: { name: string; trend: unknown }) => [x.name, x.trend]));
    expect(byName.Daily).toEqual([
      [Date.parse('2026-03-10T01:00:00Z') / 1000, 1],
      [Date.parse('2026-03-10T09:00:00Z') / 1000, 2],
    ]);
    expect(byName.Plain).toHaveLength(3);
    // the next day starts an empty chart
    app.clock.set(new Date('2026-03-11T00:00:01Z'));
    const next = await as(ws).get('/status?trends=1');
    expect(next.body.metrics.find((x: { name: string }) => x.name === 'Daily').trend).toEqual([]);
  });
});

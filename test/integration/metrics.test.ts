import { Client } from 'pg';
import { buildWorkspace, joinWorkspace, registerAgent, type TestWorkspace } from '../helpers/factories';
import { workspaceClient } from '../helpers/metricClient';
import { useTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;
useTestApp((a) => (app = a));

const { as, create } = workspaceClient(() => app);

async function metric(ws: TestWorkspace, idOrName: string) {
  const res = await as(ws).get(`/metrics/${encodeURIComponent(idOrName)}`);
  expect(res.status).toBe(200);
  return res.body;
}

async function events(ws: TestWorkspace, since = '0') {
  const rows: Array<{ id: string; data: Record<string, unknown> }> = await app.deps.ds.query(
    `SELECT id, data FROM outbox WHERE workspace_id = $1 AND type = 'metric:updated' AND id > $2 ORDER BY id`,
    [ws.id, since],
  );
  return rows;
}

async function lastOutboxId(): Promise<string> {
  const [r] = await app.deps.ds.query(`SELECT coalesce(max(id), 0)::text AS id FROM outbox`);
  return r.id;
}

const sentence = expect.stringMatching(/^[A-Z{"a-z].*\.$/s);

describe('metric CRUD', () => {
  let ws: TestWorkspace;
  beforeAll(async () => {
    ws = await buildWorkspace(app);
  });

  it('creates with the spec defaults and reads back by id and by name', async () => {
    const res = await as(ws).post('/metrics', { name: 'Revenue', description: 'Monthly revenue' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Revenue',
      description: 'Monthly revenue',
      value: 0,
      total: 0,
      currentValue: 0,
      formula: '0',
      formulaError: null,
      depth: 0,
      isLeaf: true,
      marketRangeMax: 1000,
      resetsEvery: null,
      opensAt: null,
      resolvesNaUntilMeasured: false,
      timePreference: { enabled: true, halfLife: 1 },
      liquidityCredits: null,
      marketTitle: null,
      settlementLagMinutes: null,
    });
    const byId = await metric(ws, res.body.id);
    const byName = await metric(ws, 'REVENUE');
    expect(byName.id).toBe(res.body.id);
    expect(byId).toEqual(byName);
    // a created metric counts as measured: it has a first reading
    const logs = await as(ws).get(`/metrics/${res.body.id}/logs`);
    expect(logs.body.logs).toEqual([expect.objectContaining({ kind: 'create', value: 0, na: false })]);
  });

  it('stores every setting of spec §2.2 and clears them again', async () => {
    const m = await create(ws, {
      name: 'Signups',
      value: 12.5,
      marketRangeMax: 500,
      resetsEvery: 'week',
      opensAt: 40,
      resolvesNaUntilMeasured: true,
      timePreference: { enabled: true, halfLife: 0.5, density: 3, customHorizons: ['+2w', '2031'], horizonTitles: { '+2w': 'Fortnight', ghost: 'dropped' } },
    });
    expect(m).toMatchObject({ value: 12.5, total: 12.5, marketRangeMax: 500, resetsEvery: 'week', opensAt: 40, resolvesNaUntilMeasured: true });
    expect(m.timePreference).toEqual({ enabled: true, halfLife: 0.5, density: 3, customHorizons: ['+2w', '2031'], horizonTitles: { '+2w': 'Fortnight' } });

    const upd = await as(ws).put(`/metrics/${m.id}`, { liquidityCredits: 25.5, marketTitle: '  Weekly signups?  ', settlementLagMinutes: 1440, resetsEvery: null });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ liquidityCredits: 25.5, marketTitle: 'Weekly signups?', settlementLagMinutes: 1440, resetsEvery: null, value: 12.5 });
    const [row] = await app.deps.ds.query(`SELECT liquidity_credits::text AS l FROM metrics WHERE id = $1`, [m.id]);
    expect(row.l).toBe('25500000000');

    const cleared = await as(ws).put(`/metrics/${m.id}`, { liquidityCredits: null, marketTitle: '   ', settlementLagMinutes: null, timePreference: null, opensAt: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ liquidityCredits: null, marketTitle: null, settlementLagMinutes: null, timePreference: null, opensAt: null });
    expect((await as(ws).put(`/metrics/${m.id}`, { marketTitle: 'T' })).body.marketTitle).toBe('T');
    expect((await as(ws).put(`/metrics/${m.id}`, { marketTitle: null })).body.marketTitle).toBeNull();
  });

  it('refuses a duplicate name case-insensitively with 409', async () => {
    await create(ws, { name: 'Churn' });
    const dup = await as(ws).post('/metrics', { name: 'cHURN' });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ code: 'conflict', error: sentence });
    const other = await create(ws, { name: 'Churn 2' });
    const rename = await as(ws).put(`/metrics/${other.id}`, { name: 'churn' });
    expect(rename.status).toBe(409);
  });

  it('deletes with 204, then 404', async () => {
    const m = await create(ws, { name: 'Temp' });
    const del = await as(ws).del(`/metrics/${m.id}`);
    expect(del.status).toBe(204);
    expect((await as(ws).get(`/metrics/${m.id}`)).status).toBe(404);
    expect((await as(ws).del(`/metrics/${m.id}`)).status).toBe(404);
    const missing = await as(ws).get('/metrics/no-such-metric');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'not_found', error: sentence });
  });

  it('deleting a metric with books voids them and refunds the funder', async () => {
    const before = (await app.http.get('/api/agents/me/balance').set('X-Agent-Key', ws.owner.key)).body.balance;
    const m = await create(ws, { name: 'Booked', timePreference: { enabled: true, halfLife: 1 } });
    const during = (await app.http.get('/api/agents/me/balance').set('X-Agent-Key', ws.owner.key)).body.balance;
    expect(during).toBeLessThan(before);
    expect((await as(ws).del(`/metrics/${m.id}`)).status).toBe(204);
    const after = (await app.http.get('/api/agents/me/balance').set('X-Agent-Key', ws.owner.key)).body.balance;
    expect(after).toBeCloseTo(before, 6);
  });

  it('lists metrics sorted by depth then order, and GET /workspaces/current carries them', async () => {
    const w = await buildWorkspace(app);
    const a = await create(w, { name: 'A' });
    const b = await create(w, { name: 'B' });
    const sum = await create(w, { name: 'Sum', formula: '{A} + {B}' });
    const list = await as(w).get('/metrics');
    expect(list.status).toBe(200);
    expect(list.body.map((x: { name: string }) => x.name)).toEqual(['Sum', 'A', 'B']);
    expect(list.body.map((x: { depth: number }) => x.depth)).toEqual([0, 1, 1]);
    expect(list.body[0]).toMatchObject({ id: sum.id, isLeaf: false });
    const reorder = await as(w).post('/metrics/reorder', { ids: [b.id, a.id, 'not-an-id', '00000000-0000-0000-0000-000000000000'] });
    expect(reorder.body).toEqual({ updated: 2 });
    expect((await as(w).get('/metrics')).body.map((x: { name: string }) => x.name)).toEqual(['Sum', 'B', 'A']);
    expect((await metric(w, 'B')).order).toBe(1);
    const current = await as(w).get('/workspaces/current');
    expect(current.body.metrics.map((x: { name: string }) => x.name)).toEqual(['Sum', 'B', 'A']);
  });

  it('reads are public on a public workspace; writes need manage', async () => {
    const pub = await buildWorkspace(app, { public: true });
    const m = await create(pub, { name: 'Visible' });
    expect((await as(pub, null).get('/metrics')).status).toBe(200);
    expect((await as(pub, null).get(`/metrics/${m.id}`)).body.name).toBe('Visible');
    expect((await as(pub, null).get(`/metrics/${m.id}/logs`)).status).toBe(401);
    // An anonymous write where the workspace reads anonymously lacks only an identity (403 identity_required, issue 57).
    expect((await as(pub, null).post('/metrics', { name: 'X' })).status).toBe(403);
    const trader = await registerAgent(app);
    await joinWorkspace(app, pub, trader);
    expect((await as(pub, trader.key).get(`/metrics/${m.id}/logs`)).status).toBe(200);
    const denied = await as(pub, trader.key).put(`/metrics/${m.id}`, { value: 3 });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'not_authorized', requiredCapabilities: ['manage'] });
    const priv = await buildWorkspace(app);
    expect((await as(priv, null).get('/metrics')).status).toBe(401);
  });
});

describe('validation', () => {
  let ws: TestWorkspace;
  let leafId: string;
  beforeAll(async () => {
    ws = await buildWorkspace(app);
    await create(ws, { name: 'Taken' });
    leafId = (await create(ws, { name: 'Leaf', value: 5 })).id;
  });

  const future = () => new Date(Date.now() + 3_600_000).toISOString();

  const badCreates: Array<[string, Record<string, unknown>, number, string]> = [
    ['no name', {}, 400, 'validation_failed'],
    ['blank name', { name: '   ' }, 400, 'validation_failed'],
    ['name too long', { name: 'n'.repeat(121) }, 400, 'validation_failed'],
    ['name with braces', { name: 'a{b}' }, 400, 'validation_failed'],
    ['name not a string', { name: 42 }, 400, 'validation_failed'],
    ['duplicate name', { name: 'TAKEN' }, 409, 'conflict'],
    ['value not a number', { name: 'v1', value: 'ten' }, 400, 'validation_failed'],
    ['value null on create', { name: 'v2', value: null }, 400, 'validation_failed'],
    ['marketRangeMax zero', { name: 'r1', marketRangeMax: 0 }, 400, 'validation_failed'],
    ['marketRangeMax negative', { name: 'r2', marketRangeMax: -5 }, 400, 'validation_failed'],
    ['marketRangeMax a string', { name: 'r3', marketRangeMax: 'big' }, 400, 'validation_failed'],
    ['resetsEvery unknown', { name: 'p1', resetsEvery: 'fortnight' }, 400, 'validation_failed'],
    ['opensAt above the range', { name: 'o1', opensAt: 1001 }, 400, 'validation_failed'],
    ['opensAt negative', { name: 'o2', opensAt: -1 }, 400, 'validation_failed'],
    ['opensAt above a custom range', { name: 'o3', opensAt: 50, marketRangeMax: 10 }, 400, 'validation_failed'],
    ['opensAt on a computed metric', { name: 'o4', opensAt: 5, formula: '{Leaf} * 2' }, 400, 'validation_failed'],
    ['formula syntax error', { name: 'f1', formula: '{Leaf} +' }, 400, 'formula_invalid'],
    ['formula unknown reference', { name: 'f2', formula: '1 + {Nope}' }, 400, 'formula_invalid'],
    ['formula wrong arity', { name: 'f3', formula: 'pow(2)' }, 400, 'formula_invalid'],
    ['formula unknown function', { name: 'f4', formula: 'foo(1)' }, 400, 'formula_invalid'],
    ['formula bare name', { name: 'f5', formula: 'Leaf + 1' }, 400, 'formula_invalid'],
    ['formula referencing itself', { name: 'Selfish', formula: '{Selfish} + 1' }, 400, 'formula_cycle'],
    ['formula too long', { name: 'f6', formula: '1+'.repeat(3000) + '1' }, 400, 'validation_failed'],
    ['timePreference without halfLife', { name: 't1', timePreference: { enabled: true } }, 400, 'validation_failed'],
    ['timePreference not an object', { name: 't2', timePreference: 'yes' }, 400, 'validation_failed'],
    ['timePreference bad horizon', { name: 't3', timePreference: { enabled: true, halfLife: 1, customHorizons: ['+2000min'] } }, 400, 'validation_failed'],
    ['timePreference 25 horizons', { name: 't4', timePreference: { enabled: false, customHorizons: Array.from({ length: 25 }, (_, i) => `+${i + 1}d`) } }, 400, 'validation_failed'],
    ['liquidityCredits on create', { name: 'u1', liquidityCredits: 5 }, 400, 'validation_failed'],
    ['marketTitle on create', { name: 'u2', marketTitle: 'x' }, 400, 'validation_failed'],
    ['settlementLagMinutes on create', { name: 'u3', settlementLagMinutes: 10 }, 400, 'validation_failed'],
    ['updateNote on create', { name: 'u4', updateNote: 'x' }, 400, 'validation_failed'],
    ['resolvesNaUntilMeasured not boolean', { name: 'b1', resolvesNaUntilMeasured: 'yes' }, 400, 'validation_failed'],
    ['description not a string', { name: 'd1', description: 7 }, 400, 'validation_failed'],
  ];

  it.each(badCreates)('POST /metrics refuses %s', async (_label, body, status, code) => {
    const res = await as(ws).post('/metrics', body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code, error: sentence });
  });

  const badUpdates: Array<[string, () => Record<string, unknown>, number, string]> = [
    ['marketTitle over 200 characters', () => ({ marketTitle: 't'.repeat(201) }), 400, 'validation_failed'],
    ['settlementLagMinutes negative', () => ({ settlementLagMinutes: -1 }), 400, 'validation_failed'],
    ['settlementLagMinutes over 90 days', () => ({ settlementLagMinutes: 90 * 1440 + 1 }), 400, 'validation_failed'],
    ['settlementLagMinutes fractional', () => ({ settlementLagMinutes: 1.5 }), 400, 'validation_failed'],
    ['liquidityCredits negative', () => ({ liquidityCredits: -1 }), 400, 'validation_failed'],
    ['asOf unparseable', () => ({ value: 1, asOf: 'yesterday' }), 400, 'validation_failed'],
    ['asOf without a zone', () => ({ value: 1, asOf: '2025-01-01T00:00:00' }), 400, 'validation_failed'],
    ['asOf in the future', () => ({ value: 1, asOf: future() }), 400, 'validation_failed'],
    ['asOf without a value', () => ({ asOf: '2025-01-01T00:00:00Z' }), 400, 'validation_failed'],
    ['na with a value', () => ({ na: true, value: 3 }), 400, 'validation_failed'],
    ['na not boolean', () => ({ na: 'yes' }), 400, 'validation_failed'],
    ['oldValue without a value', () => ({ oldValue: 3 }), 400, 'validation_failed'],
    ['updateNote without a value', () => ({ updateNote: 'why' }), 400, 'validation_failed'],
    ['value a string', () => ({ value: 'abc' }), 400, 'validation_failed'],
    ['name null', () => ({ name: null }), 400, 'validation_failed'],
    ['marketRangeMax zero', () => ({ marketRangeMax: 0 }), 400, 'validation_failed'],
    ['marketRangeMax below opensAt', () => ({ opensAt: 50, marketRangeMax: 40 }), 400, 'validation_failed'],
    ['opensAt above the range', () => ({ opensAt: 2000 }), 400, 'validation_failed'],
    ['formula syntax error', () => ({ formula: '1 +* 2' }), 400, 'formula_invalid'],
    ['timePreference negative halfLife', () => ({ timePreference: { enabled: true, halfLife: -1 } }), 400, 'validation_failed'],
    ['name taken', () => ({ name: 'taken' }), 409, 'conflict'],
  ];

  it.each(badUpdates)('PUT /metrics/{id} refuses %s and changes nothing', async (_label, body, status, code) => {
    const before = await metric(ws, leafId);
    const res = await as(ws).put(`/metrics/${leafId}`, body());
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code, error: sentence });
    expect(await metric(ws, leafId)).toEqual(before);
  });

  it('reports the position of a formula error', async () => {
    const res = await as(ws).post('/metrics', { name: 'pos', formula: '{Leaf} +' });
    expect(res.body).toMatchObject({ code: 'formula_invalid', position: 8 });
    const unknown = await as(ws).post('/metrics', { name: 'pos2', formula: '2 * {Ghost}' });
    expect(unknown.body).toMatchObject({ code: 'formula_invalid', position: 4 });
    expect(unknown.body.error).toContain('Ghost');
  });

  it('404 for updates and deletes of an unknown metric', async () => {
    expect((await as(ws).put('/metrics/ghost', { value: 1 })).status).toBe(404);
    expect((await as(ws).del('/metrics/7a0b6a52-5a8e-4c55-9d1b-1d5c1c1c1c1c')).status).toBe(404);
  });
});

describe('formulas and recalculation', () => {
  it('recalculates a 3-level chain in dependency order in one transaction, with readings and events', async () => {
    const ws = await buildWorkspace(app);
    const a = await create(ws, { name: 'A', value: 1 });
    const b = await create(ws, { name: 'B', formula: '{A} * 2' });
    // C reads A and B: computing it before B would use a stale B
    const c = await create(ws, { name: 'C', formula: '{B} + {a}' });
    const d = await create(ws, { name: 'D', value: 100, formula: 'sqrt({C}) * 0' });
    expect(c.formula).toBe('{B} + {A}');
    expect([b.total, c.total, d.total]).toEqual([2, 3, 100]);

    const since = await lastOutboxId();
    const res = await as(ws).put(`/metrics/${a.id}`, { value: 10, updateNote: 'Q3 close', oldValue: 0.5 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ value: 10, total: 10 });
    expect((await metric(ws, 'B')).total).toBeCloseTo(20);
    expect((await metric(ws, 'C')).total).toBeCloseTo(30);
    expect((await metric(ws, 'D')).total).toBeCloseTo(100);

    const list = await as(ws).get('/metrics');
    expect(list.body.map((x: { name: string; depth: number }) => [x.name, x.depth])).toEqual([
      ['D', 0],
      ['C', 1],
      ['B', 2],
      ['A', 3],
    ]);

    const ev = await events(ws, since);
    expect(ev.map((e) => e.data)).toEqual([
      { metricId: a.id, metricName: 'A', oldValue: 1, newValue: 10 },
      { metricId: b.id, metricName: 'B', oldValue: 2, newValue: 20 },
      { metricId: c.id, metricName: 'C', oldValue: 3, newValue: 30 },
    ]);
    const cLogs = await as(ws).get(`/metrics/${c.id}/logs`);
    expect(cLogs.body.logs[0]).toMatchObject({ value: 30, kind: 'update', na: false });
    // D's total did not move, so it got no reading and no event
    const dLogs = await as(ws).get(`/metrics/${d.id}/logs`);
    expect(dLogs.body.logs).toHaveLength(1);

    const updates = await as(ws).get('/updates?limit=5');
    expect(updates.status).toBe(200);
    expect(updates.body[0]).toMatchObject({ metricId: a.id, metricName: 'A', oldValue: 0.5, newValue: 10, note: 'Q3 close', na: false, updatedBy: ws.owner.id });
  });

  it('a base value on a computed metric adds to its formula result', async () => {
    const ws = await buildWorkspace(app);
    await create(ws, { name: 'X', value: 4 });
    const y = await create(ws, { name: 'Y', formula: 'max({X}, 1) / 2' });
    expect(y.total).toBeCloseTo(2);
    const upd = await as(ws).put(`/metrics/${y.id}`, { value: 0.5 });
    expect(upd.body).toMatchObject({ value: 0.5 });
    expect(upd.body.total).toBeCloseTo(2.5);
  });

  it('a formula change recalculates, re-types the metric and refuses a cycle', async () => {
    const ws = await buildWorkspace(app);
    const p = await create(ws, { name: 'P', value: 3 });
    const q = await create(ws, { name: 'Q', formula: '{P} + 1' });
    const r = await create(ws, { name: 'R', formula: '{Q} * 10' });
    expect(r.total).toBeCloseTo(40);

    const cycle = await as(ws).put(`/metrics/${p.id}`, { formula: '{R} - 1' });
    expect(cycle.status).toBe(400);
    expect(cycle.body.code).toBe('formula_cycle');
    expect(cycle.body.cycle).toEqual(expect.arrayContaining(['P', 'Q', 'R']));
    expect(cycle.body.error).toMatch(/\{P\}|\{Q\}|\{R\}/);
    expect((await metric(ws, 'P')).formula).toBe('0');

    const self = await as(ws).put(`/metrics/${q.id}`, { formula: '{Q}' });
    expect(self.body).toMatchObject({ code: 'formula_cycle', cycle: ['Q'] });

    const changed = await as(ws).put(`/metrics/${q.id}`, { formula: '5' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ total: 5, isLeaf: true, depth: 1 });
    expect((await metric(ws, 'R')).total).toBeCloseTo(50);
    expect((await metric(ws, 'P')).depth).toBe(0);
  });

  it('a non-finite result is an error on the metric and a null total, never NaN or Infinity', async () => {
    const ws = await buildWorkspace(app);
    const num = await create(ws, { name: 'Num', value: 6 });
    const den = await create(ws, { name: 'Den', value: 0 });
    const ratio = await create(ws, { name: 'Ratio', formula: '{Num} / {Den}' });
    const neg = await create(ws, { name: 'Root', formula: 'sqrt(0 - {Num})' });
    const down = await create(ws, { name: 'Downstream', formula: '{Ratio} + 1' });
    expect(ratio).toMatchObject({ total: null, currentValue: null, formulaError: sentence });
    expect(neg).toMatchObject({ total: null });
    expect(down.total).toBeNull();
    expect(down.formulaError).toContain('Ratio');
    const raw = await as(ws).get('/metrics');
    expect(raw.text).not.toMatch(/NaN|Infinity/);
    const logsBefore = (await as(ws).get(`/metrics/${ratio.id}/logs`)).body.logs;
    expect(logsBefore).toEqual([]);

    await as(ws).put(`/metrics/${den.id}`, { value: 2 }).expect(200);
    expect(await metric(ws, ratio.id)).toMatchObject({ total: 3, formulaError: null });
    expect(await metric(ws, down.id)).toMatchObject({ total: 4, formulaError: null });
    await as(ws).put(`/metrics/${num.id}`, { value: -4 }).expect(200);
    expect((await metric(ws, neg.id)).total).toBeCloseTo(2);
  });

  it('renaming a referenced metric rewrites the formulas that name it and logs a revision', async () => {
    const ws = await buildWorkspace(app);
    const rev = await create(ws, { name: 'Rev', value: 10 });
    const cost = await create(ws, { name: 'Cost', value: 4 });
    const profit = await create(ws, { name: 'Profit', formula: '{ Rev } - {Cost}' });
    const margin = await create(ws, { name: 'Margin', formula: '{Profit} / {Rev}' });
    const res = await as(ws).put(`/metrics/${rev.id}`, { name: 'Revenue', description: 'All income' });
    expect(res.status).toBe(200);
    expect((await metric(ws, profit.id)).formula).toBe('{ Revenue } - {Cost}');
    expect((await metric(ws, margin.id)).formula).toBe('{Profit} / {Revenue}');
    expect((await metric(ws, margin.id)).total).toBeCloseTo(0.6);
    // the old name is gone from formulas
    expect((await as(ws).post('/metrics', { name: 'Old', formula: '{Rev}' })).body.code).toBe('formula_invalid');
    const revs = await app.deps.ds.query(`SELECT field, old_value, new_value, agent_id FROM metric_revisions WHERE metric_id = $1 ORDER BY id`, [rev.id]);
    expect(revs).toEqual([
      { field: 'name', old_value: 'Rev', new_value: 'Revenue', agent_id: ws.owner.id },
      { field: 'description', old_value: '', new_value: 'All income', agent_id: ws.owner.id },
    ]);
    await expect(app.deps.ds.query(`UPDATE metric_revisions SET new_value = 'x' WHERE metric_id = $1`, [rev.id])).rejects.toThrow(/append-only/);
    // a referenced metric cannot be deleted
    const del = await as(ws).del(`/metrics/${cost.id}`);
    expect(del.status).toBe(409);
    expect(del.body).toMatchObject({ code: 'conflict', referencedBy: [{ id: profit.id, name: 'Profit' }] });
  });

  it('migrate-leaf-types repairs typing and is idempotent', async () => {
    const ws = await buildWorkspace(app);
    await create(ws, { name: 'L' });
    const c = await create(ws, { name: 'Comp', formula: '{L} + 1' });
    await app.deps.ds.query(`UPDATE metrics SET is_leaf = true, depth = 7 WHERE id = $1`, [c.id]);
    const first = await as(ws).post('/metrics/migrate-leaf-types');
    expect(first.body).toEqual({ updated: 1 });
    expect(await metric(ws, c.id)).toMatchObject({ isLeaf: false, depth: 0 });
    expect((await as(ws).post('/metrics/migrate-leaf-types')).body).toEqual({ updated: 0 });
  });
});

describe('readings', () => {
  it('files N/A readings without moving the value, honours asOf and paginates logs', async () => {
    const ws = await buildWorkspace(app);
    const m = await create(ws, { name: 'Visits', value: 7 });
    const asOf = new Date(Date.now() - 86_400_000).toISOString();
    await as(ws).put(`/metrics/${m.id}`, { value: 8, asOf }).expect(200);
    const na = await as(ws).put(`/metrics/${m.id}`, { na: true, updateNote: 'sensor down' });
    expect(na.status).toBe(200);
    expect(na.body).toMatchObject({ value: 8, total: 8 });
    await as(ws).put(`/metrics/${m.id}`, { value: null }).expect(200);
    expect((await metric(ws, m.id)).value).toBe(8);
    await as(ws).put(`/metrics/${m.id}`, { value: 8 }).expect(200); // a re-measurement is still a reading

    const page1 = await as(ws).get(`/metrics/${m.id}/logs?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.logs).toHaveLength(2);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await as(ws).get(`/metrics/${m.id}/logs?limit=2&cursor=${page1.body.nextCursor}`);
    const page3 = await as(ws).get(`/metrics/${m.id}/logs?limit=2&cursor=${page2.body.nextCursor}`);
    expect(page3.body.nextCursor).toBeNull();
    const all = [...page1.body.logs, ...page2.body.logs, ...page3.body.logs];
    expect(all).toHaveLength(5);
    expect(new Set(all.map((l: { id: string }) => l.id)).size).toBe(5);
    const nas = all.filter((l: { na: boolean }) => l.na);
    expect(nas).toHaveLength(2);
    expect(nas.every((l: { value: number | null }) => l.value === null)).toBe(true);
    expect(all.find((l: { note: string | null }) => l.note === 'sensor down')).toBeTruthy();
    const dated = all.find((l: { asOf: string }) => l.asOf === asOf);
    expect(dated).toMatchObject({ value: 8, kind: 'update' });
    expect(all[all.length - 1].asOf).toBe(asOf); // newest first by asOf

    expect((await as(ws).get(`/metrics/${m.id}/logs?cursor=garbage`)).status).toBe(400);
    expect((await as(ws).get(`/metrics/${m.id}/logs?limit=1001`)).status).toBe(400);
    const upd = await as(ws).get('/updates');
    expect(upd.body.filter((u: { na: boolean }) => u.na)).toHaveLength(2);
  });

  it('backfill writes history only, under every rule of spec §4.4', async () => {
    const ws = await buildWorkspace(app);
    const m = await create(ws, { name: 'Sales', value: 50 });
    const [{ as_of: oldest }] = await app.deps.ds.query(`SELECT min(as_of) AS as_of FROM metric_readings WHERE metric_id = $1`, [m.id]);
    const day = (n: number) => new Date(oldest.getTime() - n * 86_400_000).toISOString();
    const url = `/metrics/${m.id}/logs/backfill`;

    const ok = await as(ws).post(url, { readings: [{ at: day(3), value: 30 }, { at: day(5), value: 10.5 }, { at: day(4), value: 20 }] });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ written: 3, oldest: day(5), newest: day(3) });
    expect(await metric(ws, m.id)).toMatchObject({ value: 50, total: 50 });
    const logs = (await as(ws).get(`/metrics/${m.id}/logs`)).body.logs;
    expect(logs.map((l: { value: number }) => l.value)).toEqual([50, 30, 20, 10.5]);
    expect(logs.slice(1).every((l: { kind: string }) => l.kind === 'backfill')).toBe(true);
    expect((await as(ws).get('/updates')).body).toEqual([]);

    const cases: Array<[string, object]> = [
      ['not older than the oldest', { readings: [{ at: day(5), value: 1 }] }],
      ['newer than the oldest', { readings: [{ at: day(7), value: 1 }, { at: new Date().toISOString(), value: 1 }] }],
      ['duplicate instants', { readings: [{ at: day(9), value: 1 }, { at: day(9).replace('Z', '+00:00'), value: 2 }] }],
      ['unparseable instant', { readings: [{ at: 'last tuesday', value: 1 }] }],
      ['value not a number', { readings: [{ at: day(9), value: 'x' }] }],
      ['value null', { readings: [{ at: day(9), value: null }] }],
      ['empty list', { readings: [] }],
      ['not a list', { readings: 'x' }],
      ['over 2000 readings', { readings: Array.from({ length: 2001 }, (_, i) => ({ at: day(10 + i), value: i })) }],
    ];
    for (const [label, body] of cases) {
      const res = await as(ws).post(url, body);
      expect({ label, status: res.status }).toEqual({ label, status: 400 });
      expect(res.body.error).toEqual(sentence);
    }
    expect((await as(ws).get(`/metrics/${m.id}/logs`)).body.logs).toHaveLength(4);

    const most = await as(ws).post(url, { readings: Array.from({ length: 2000 }, (_, i) => ({ at: day(10 + i), value: i })) });
    expect(most.body.written).toBe(2000);

    // a metric with no reading yet: the bound is now
    const fresh = await create(ws, { name: 'Fresh', resolvesNaUntilMeasured: true });
    expect(fresh.measuredAt).toBeNull();
    const ahead = await as(ws).post(`/metrics/${fresh.id}/logs/backfill`, { readings: [{ at: new Date(Date.now() + 3_600_000).toISOString(), value: 1 }] });
    expect(ahead.status).toBe(400);
    await as(ws).post(`/metrics/${fresh.id}/logs/backfill`, { readings: [{ at: '2024-01-01', value: 1 }] }).expect(200);
    expect((await metric(ws, fresh.id)).measuredAt).toBe('2024-01-01T00:00:00.000Z');
  });

  it('purge deletes one metric’s readings or the whole workspace’s, and measuredAt stays', async () => {
    const ws = await buildWorkspace(app);
    const a = await create(ws, { name: 'PA' });
    const b = await create(ws, { name: 'PB' });
    await as(ws).put(`/metrics/${a.id}`, { value: 1 }).expect(200);
    await as(ws).put(`/metrics/${a.id}`, { value: 2 }).expect(200);
    await as(ws).put(`/metrics/${b.id}`, { value: 3 }).expect(200);
    const one = await as(ws).post('/metrics/logs/purge', { metricId: a.id });
    expect(one.body).toEqual({ deleted: 3, scope: 'metric', metricId: a.id });
    expect((await as(ws).get(`/metrics/${a.id}/logs`)).body.logs).toEqual([]);
    expect((await as(ws).get(`/metrics/${b.id}/logs`)).body.logs).toHaveLength(2);
    expect((await metric(ws, a.id)).measuredAt).not.toBeNull();
    expect((await as(ws).post('/metrics/logs/purge', { metricId: 'nope' })).status).toBe(404);
    const all = await as(ws).post('/metrics/logs/purge', {});
    expect(all.body).toEqual({ deleted: 2, scope: 'workspace' });
    expect((await as(ws).post('/metrics/logs/purge')).body).toEqual({ deleted: 0, scope: 'workspace' });
  });

  it('readings and events roll back with a refused update', async () => {
    const ws = await buildWorkspace(app);
    const m = await create(ws, { name: 'Atomic', value: 1 });
    const since = await lastOutboxId();
    const bad = await as(ws).put(`/metrics/${m.id}`, { value: 2, opensAt: 5000 });
    expect(bad.status).toBe(400);
    expect(await events(ws, since)).toEqual([]);
    expect((await as(ws).get(`/metrics/${m.id}/logs`)).body.logs).toHaveLength(1);
    expect((await metric(ws, m.id)).value).toBe(1);
  });
});

describe('catalog', () => {
  it('GET /help lists the metric endpoints with their body schemas', async () => {
    const res = await app.http.get('/api/help?section=metrics');
    expect(res.status).toBe(200);
    const paths = res.body.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'GET /api/metrics',
        'POST /api/metrics',
        'PUT /api/metrics/{id}',
        'DELETE /api/metrics/{id}',
        'GET /api/metrics/{id}/logs',
        'POST /api/metrics/{id}/logs/backfill',
        'POST /api/metrics/logs/purge',
        'POST /api/metrics/reorder',
        'POST /api/metrics/migrate-leaf-types',
      ]),
    );
    const put = res.body.endpoints.find((e: { method: string; path: string }) => e.method === 'PUT');
    expect(Object.keys(put.body.properties)).toEqual(expect.arrayContaining(['value', 'formula', 'marketTitle', 'settlementLagMinutes', 'asOf', 'na']));
    expect((await app.http.get('/api/help?section=status')).body.matched).toBe(1);
    expect((await app.http.get('/api/help?section=updates')).body.matched).toBe(1);
  });
});

describe('uniqueness under concurrency', () => {
  it('two concurrent creates of one name: one 201, one 409', async () => {
    const ws = await buildWorkspace(app);
    const name = uniqueName('race');
    const [r1, r2] = await Promise.all([as(ws).post('/metrics', { name, timePreference: null }), as(ws).post('/metrics', { name, timePreference: null })]);
    expect([r1.status, r2.status].sort()).toEqual([201, 409]);
  });
});

describe('a burst of readings on one workspace (Issue 26)', () => {
  it('queues in process: at most one backend waits on the metric lock, every reading lands, a trade goes through', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const target = await create(ws, { name: uniqueName('burst'), value: 0 });
    const booked = await createMetric(app, ws, { value: 500 });
    const [market] = await marketsOf(app, ws, booked.id);
    const t = await trader(app, ws, 100);
    const [{ n: before }] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM metric_readings WHERE metric_id = $1`, [target.id]);

    // Sampled on a connection of its own, outside the app's pool (size 10 in tests).
    const probe = new Client({ connectionString: app.deps.config.databaseUrl });
    await probe.connect();
    const [{ db }] = await app.deps.ds.query(`SELECT current_database() AS db`);
    let sampling = true;
    let maxWaiting = 0;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await probe.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%pg_advisory_xact_lock(7101%'`,
          [db],
        );
        maxWaiting = Math.max(maxWaiting, rows[0].n);
        samples += 1;
      }
    })();
    try {
      const readings = Array.from({ length: 30 }, (_, i) => as(ws).put(`/metrics/${target.id}`, { value: i + 1 }));
      const traded = trade(app, ws, t, { marketId: market.id, direction: 'higher', amount: 5 });
      const [res, tradeRes] = await Promise.all([Promise.all(readings), traded]);
      expect(res.map((r) => r.status)).toEqual(Array(30).fill(200));
      expect(tradeRes.status).toBe(200);
    } finally {
      sampling = false;
      await sampler;
      await probe.end();
    }
    expect(samples).toBeGreaterThan(0);
    expect(maxWaiting).toBeLessThanOrEqual(1);
    const [{ n: after }] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM metric_readings WHERE metric_id = $1`, [target.id]);
    expect(after - before).toBe(30);
  });
});

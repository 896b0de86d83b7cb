import { registerAgent } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';

let app: TestApp;
useTestApp((a) => (app = a), { ONBOARDING_OPEN: 'true', UNCLAIMED_SIGNUP_CREDITS: '100', SIGNUP_CREDITS: '1000' });

const onboard = (workspace: Record<string, unknown>) => app.http.post('/api/onboard').send({ workspace: { name: 'Templated', ...workspace } });

async function filled(template: string, templateParams?: Record<string, unknown>) {
  const res = await onboard({ template, templateParams });
  expect(res.status).toBe(201);
  const h = { 'X-Agent-Key': res.body.apiKey, 'X-Workspace-Id': res.body.workspace.id };
  const metrics = await app.http.get('/api/metrics').set(h);
  const byName = Object.fromEntries(metrics.body.map((x: any) => [x.name, x]));
  return { res, h, byName, metrics: metrics.body };
}

describe('onboarding templates', () => {
  it('GET /onboard/templates lists blank and at least three filled templates', async () => {
    const list = await app.http.get('/api/onboard/templates');
    expect(list.status).toBe(200);
    expect(list.body.map((t: any) => t.id)).toEqual(['blank', 'startup-kpis', 'personal-goals', 'open-source-health']);
    for (const t of list.body.slice(1)) {
      expect(t.metrics.some((x: any) => x.formula)).toBe(true);
      expect(t.starterProposal).not.toBeNull();
    }
  });

  it('startup-kpis: metrics with derived ARPU, churn and runway, and a starter proposal that spends nothing', async () => {
    const { res, h, byName, metrics } = await filled('startup-kpis');
    expect(res.body.workspace).toMatchObject({ template: 'startup-kpis', metricsCreated: 8, starterProposalId: expect.any(String) });
    expect(metrics).toHaveLength(8);
    expect(byName.ARPU.total).toBeCloseTo(200, 9);
    expect(byName['Churn Rate'].total).toBeCloseTo(4, 9);
    expect(byName['Runway Months'].total).toBeCloseTo(250000 / 30000, 9);
    expect(byName.ARPU.isLeaf).toBe(false);
    expect(byName.MRR).toMatchObject({ isLeaf: true, value: 10000, marketRangeMax: 100000, timePreference: null });
    const p = await app.http.get(`/api/proposals/${res.body.workspace.starterProposalId}`).set(h);
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ title: 'Raise prices 10% for new customers', status: 'pending' });
    expect(p.body.conditionalMarkets.length).toBeGreaterThan(0);
    expect(p.body.conditionalMarkets.every((mk: any) => mk.funded === false)).toBe(true);
    // The grant is untouched: no books were paid for.
    expect((await app.http.get('/api/agents/me/balance').set(h)).body.balance).toBe(100);
    await expectLedgerSound(app.deps);
  });

  it('personal-goals and open-source-health compute their scores', async () => {
    const personal = await filled('personal-goals');
    expect(personal.res.body.workspace).toMatchObject({ metricsCreated: 5, starterProposalId: expect.any(String) });
    expect(personal.byName['Wellbeing Score'].total).toBeCloseTo(55, 9);
    const oss = await filled('open-source-health');
    expect(oss.res.body.workspace).toMatchObject({ metricsCreated: 7, starterProposalId: expect.any(String) });
    expect(oss.byName['Issue Close Rate'].total).toBeCloseTo(20, 9);
    expect(oss.byName['Health Score'].total).toBeCloseTo(35, 9);
  });

  it('templateParams set starting values and can skip the starter proposal; mistakes are refused whole', async () => {
    const { res, byName } = await filled('startup-kpis', { values: { MRR: 20000, Customers: 40 }, starterProposal: false });
    expect(res.body.workspace.starterProposalId).toBeNull();
    expect(byName.ARPU.total).toBeCloseTo(500, 9);
    for (const params of [{ values: { ARPU: 3 } }, { values: { Nope: 1 } }, { values: { MRR: -1 } }, { other: true }]) {
      const bad = await onboard({ template: 'startup-kpis', templateParams: params });
      expect({ params, status: bad.status }).toEqual({ params, status: 400 });
      expect(bad.body.code).toBe('validation_failed');
    }
    const unknown = await onboard({ template: 'moonbase' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain('startup-kpis');
  });

  it('POST /workspaces applies a template as POST /onboard does (same metrics, values, starter proposal), in one transaction', async () => {
    const viaOnboard = await filled('startup-kpis', { values: { MRR: 12000 }, starterProposal: true });
    const owner = await registerAgent(app);
    const res = await app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).send({ name: 'KPIs', template: 'startup-kpis', templateParams: { values: { MRR: 12000 }, starterProposal: true } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ template: 'startup-kpis', metricsCreated: viaOnboard.res.body.workspace.metricsCreated, starterProposalId: expect.any(String) });
    const h = { 'X-Agent-Key': owner.key, 'X-Workspace-Id': res.body.id };
    const metrics = (await app.http.get('/api/metrics').set(h)).body as any[];
    const shape = (ms: any[]) => ms.map((m) => ({ name: m.name, formula: m.formula ?? null, value: m.value, total: m.total })).sort((a, b) => a.name.localeCompare(b.name));
    expect(shape(metrics)).toEqual(shape(viaOnboard.metrics));
    expect((await app.http.get(`/api/proposals/${res.body.starterProposalId}`).set(h)).body.title).toBe('Raise prices 10% for new customers');
    // Without a template: a bare workspace, as before.
    const bare = await app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).send({ name: 'Bare' });
    expect(bare.body).toMatchObject({ template: null, metricsCreated: 0, starterProposalId: null });
    // An unknown template or bad params: 400 and no workspace at all.
    const count = async () => (await app.deps.ds.query(`SELECT count(*)::int AS n FROM workspaces WHERE owner_id = $1`, [owner.id]))[0].n;
    const before = await count();
    const unknown = await app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).send({ name: 'Nope', template: 'no-such' });
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    const badParams = await app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).send({ name: 'Nope', template: 'startup-kpis', templateParams: { values: { MRR: 'lots' } } });
    expect(badParams.status).toBe(400);
    expect(await count()).toBe(before);
    await expectLedgerSound(app.deps);
  });
});

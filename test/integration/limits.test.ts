import { buildWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, trader } from '../helpers/markets';

/**
 * Issue 26 item 3, bounded costs: what an ordinary participant creates for free is limited:
 * proposals per participant per hour, and unfunded books held open by its proposals. The workspace
 * owner and the master key are not bound.
 */
let app: TestApp;
useTestApp((a) => (app = a), { RATE_LIMIT_PROPOSALS_PER_HOUR: '6', FREE_BOOKS_PER_PARTICIPANT: '4' });

const propose = (key: string, ws: string, body: Record<string, unknown>) => app.http.post('/api/proposals').set('X-Agent-Key', key).set('X-Workspace-Id', ws).send(body);
const proposalsBy = async (agentId: string): Promise<number> => (await app.deps.ds.query(`SELECT count(*)::int AS n FROM proposals WHERE proposed_by = $1`, [agentId]))[0].n;

describe('free creation limits', () => {
  it('proposals per participant per hour: 429 rate_limited saying when the next one frees; the owner is not bound', async () => {
    const ws = await buildWorkspace(app, { public: true });
    await createMetric(app, ws, { value: 500 });
    const t = await trader(app, ws, 1000);
    for (let i = 0; i < 6; i++) expect((await propose(t.key, ws.id, { title: `p${i}`, liquidity: 1 })).status).toBe(200);
    // A dry run spends nothing.
    expect((await propose(t.key, ws.id, { title: 'quote', liquidity: 1, dryRun: true })).status).toBe(200);
    const refused = await propose(t.key, ws.id, { title: 'p6', liquidity: 1 });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', bucket: 'proposal', limit: 6, windowSeconds: 3600 });
    expect(refused.body.retryAfter).toBeGreaterThan(0);
    expect(refused.headers['retry-after']).toBe(String(refused.body.retryAfter));
    expect(refused.body.error).toMatch(/6 proposals an hour per participant; the next one frees in \d+ seconds \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)/);
    expect(await proposalsBy(t.id)).toBe(6);
    for (let i = 0; i < 7; i++) expect((await propose(ws.owner.key, ws.id, { title: `owner ${i}`, liquidity: 1 })).status).toBe(200);
    await expectLedgerSound(app.deps);
  });

  it('unfunded books held open by a participant’s proposals: past the cap 409 and nothing created; funded ones still go', async () => {
    const ws = await buildWorkspace(app, { public: true });
    await createMetric(app, ws, { value: 500 });
    const t = await trader(app, ws, 1000);
    const first = await propose(t.key, ws.id, { title: 'free 1', liquidity: 0 });
    expect(first.status).toBe(200);
    const perProposal = first.body.unfundedBooks.length;
    expect(perProposal).toBeGreaterThan(0);
    let accepted = 1;
    let refused;
    for (let i = 2; i < 10 && !refused; i++) {
      const r = await propose(t.key, ws.id, { title: `free ${i}`, liquidity: 0 });
      if (r.status === 200) accepted++;
      else refused = r;
    }
    expect(refused?.status).toBe(409);
    expect(refused?.body).toMatchObject({ code: 'conflict', limit: 4 });
    expect(refused?.body.error).toContain('unfunded books');
    expect(accepted * perProposal).toBeLessThanOrEqual(4);
    expect(await proposalsBy(t.id)).toBe(accepted);
    // A proposal with liquidity opens funded books: not bound by the cap (the hourly limit allows it).
    expect((await propose(t.key, ws.id, { title: 'funded', liquidity: 1 })).status).toBe(200);
    await expectLedgerSound(app.deps);
  });
});

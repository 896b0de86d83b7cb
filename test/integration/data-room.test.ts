import { buildWorkspace, registerAgent, mint } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { deleteAndWait } from '../helpers/deletions';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

let app: TestApp;
useTestApp((a) => (app = a));

const hdr = (key: string | null, wsId: string) => (key ? { 'X-Agent-Key': key, 'X-Workspace-Id': wsId } : { 'X-Workspace-Id': wsId });

describe('GET /data-room/actions', () => {
  it('logs revisions, readings, decisions, settlements and voids with reasons, newest first, by cursor', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const owner = hdr(ws.owner.key, ws.id);
    const metric = await createMetric(app, ws, { value: 100 });
    await app.http.put(`/api/metrics/${metric.id}`).set(owner).send({ name: `${metric.name}-renamed`, description: 'What we count' }).expect(200);
    await app.http.put(`/api/metrics/${metric.id}`).set(owner).send({ value: 120, updateNote: 'weekly count' }).expect(200);

    const t = await trader(app, ws, 100);
    const p = await app.http.post('/api/proposals').set(hdr(t.key, ws.id)).send({ title: 'Ship it', liquidity: 1 });
    expect(p.status).toBe(200);
    await app.http.post(`/api/proposals/${p.body.id}/approve`).set(owner).send({}).expect(200);

    const [book] = await marketsOf(app, ws, metric.id);
    expect((await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 5 })).status).toBe(200);
    const s = await app.http.post(`/api/metrics/${metric.id}/settle`).set(owner).send({ value: 300, reason: 'launch counted early' });
    expect(s.status).toBe(200);

    // Anonymous read of a public workspace.
    const all = await app.http.get('/api/data-room/actions?limit=200').set(hdr(null, ws.id));
    expect(all.status).toBe(200);
    const kinds = new Set(all.body.actions.map((a: any) => a.kind));
    expect([...kinds].sort()).toEqual(['metric', 'proposal', 'reading', 'settlement', 'void']);
    const rev = all.body.actions.filter((a: any) => a.kind === 'metric');
    expect(rev).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'name', from: metric.name, to: `${metric.name}-renamed`, agentId: ws.owner.id, metricId: metric.id }),
        expect.objectContaining({ field: 'description', from: '', to: 'What we count' }),
      ]),
    );
    expect(all.body.actions).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'reading', value: 120, note: 'weekly count' })]));
    expect(all.body.actions).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'proposal', proposalId: p.body.id, decision: 'approved', title: 'Ship it' })]));
    const settled = all.body.actions.filter((a: any) => a.kind === 'settlement');
    expect(settled.length).toBeGreaterThan(0);
    expect(settled).toEqual(expect.arrayContaining([expect.objectContaining({ marketId: book.id, settledEarly: true, reason: 'launch counted early', value: 300 })]));
    const voids = all.body.actions.filter((a: any) => a.kind === 'void');
    expect(voids.length).toBeGreaterThan(0);
    for (const v of voids) expect(v.reason).toEqual(expect.any(String));
    expect(voids.some((v: any) => v.branch === 'declined' && v.proposalId === p.body.id)).toBe(true);
    for (let i = 1; i < all.body.actions.length; i++) expect(all.body.actions[i - 1].at >= all.body.actions[i].at).toBe(true);
    expect(all.body.nextCursor).toBeNull();

    // Pages of 2 walk the same rows, none twice, none missed.
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await app.http.get(`/api/data-room/actions?limit=2${q}`).set(owner);
      expect(page.status).toBe(200);
      expect(page.body.actions.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.actions.map((a: any) => a.id));
      cursor = page.body.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(all.body.actions.map((a: any) => a.id));

    const onlyProposals = await app.http.get('/api/data-room/actions?kind=proposal').set(owner);
    expect(onlyProposals.body.actions.map((a: any) => a.kind)).toEqual(['proposal']);
    expect((await app.http.get('/api/data-room/actions?kind=nope').set(owner)).status).toBe(400);
    expect((await app.http.get('/api/data-room/actions?cursor=garbage').set(owner)).status).toBe(400);
  });

  it('follows read rules: private workspaces refuse outsiders, hidden metrics are left out', async () => {
    const ws = await buildWorkspace(app, { public: false });
    const owner = hdr(ws.owner.key, ws.id);
    const open = await createMetric(app, ws, { value: 1, timePreference: null });
    const hidden = await createMetric(app, ws, { value: 2, timePreference: null });
    await app.http.put(`/api/metrics/${open.id}`).set(owner).send({ value: 3 }).expect(200);
    await app.http.put(`/api/metrics/${hidden.id}`).set(owner).send({ value: 4 }).expect(200);
    const member = await registerAgent(app);
    await mint(app, member.id, 1);
    const g = await app.http.post('/api/groups').set(owner).send({ name: 'Readers', capabilities: ['read'], members: [member.id], metricPermissions: { [hidden.id]: { read: false } } });
    expect(g.status).toBe(201);
    const groups = await app.http.get('/api/groups').set(owner);
    const pub = groups.body.find((x: any) => x.name === 'Public');
    await app.http.put(`/api/groups/${pub.id}`).set(owner).send({ metricPermissions: { [hidden.id]: { read: false } } }).expect(200);

    expect((await app.http.get('/api/data-room/actions').set(hdr(null, ws.id))).status).toBe(401);
    const outsider = await registerAgent(app);
    expect((await app.http.get('/api/data-room/actions').set(hdr(outsider.key, ws.id))).status).toBe(403);

    const mine = await app.http.get('/api/data-room/actions?limit=1').set(hdr(member.key, ws.id));
    expect(mine.status).toBe(200);
    expect(mine.body.actions).toHaveLength(1);
    expect(mine.body.actions[0].metricId).toBe(open.id);
    const rest = await app.http.get(`/api/data-room/actions?cursor=${encodeURIComponent(mine.body.nextCursor ?? '')}`).set(hdr(member.key, ws.id));
    const ids = [...mine.body.actions, ...(rest.body.actions ?? [])].map((a: any) => a.metricId);
    expect(ids).not.toContain(hidden.id);
    const ownerView = await app.http.get('/api/data-room/actions').set(owner);
    expect(ownerView.body.actions.map((a: any) => a.metricId)).toContain(hidden.id);
  });

  it('is append-only: renaming and deleting a metric after its acts leaves every row as written; the workspace deletion takes them', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const owner = hdr(ws.owner.key, ws.id);
    const metric = await createMetric(app, ws, { value: 100 });
    const other = await createMetric(app, ws, { value: 7 });
    await app.http.put(`/api/metrics/${metric.id}`).set(owner).send({ name: `${metric.name}-first`, description: 'Counted weekly' }).expect(200);
    await app.http.put(`/api/metrics/${metric.id}`).set(owner).send({ value: 110, updateNote: 'monday' }).expect(200);
    await app.http.put(`/api/metrics/${other.id}`).set(owner).send({ value: 8 }).expect(200);
    const t = await trader(app, ws, 100);
    const p = await app.http.post('/api/proposals').set(hdr(t.key, ws.id)).send({ title: 'Try the thing', liquidity: 1 });
    expect(p.status).toBe(200);
    await app.http.post(`/api/proposals/${p.body.id}/decline`).set(owner).send({}).expect(200);
    const [book] = await marketsOf(app, ws, metric.id);
    expect((await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 5 })).status).toBe(200);
    await app.http.post(`/api/metrics/${metric.id}/settle`).set(owner).send({ value: 150, reason: 'counted at the close' }).expect(200);

    const before = (await app.http.get('/api/data-room/actions?limit=200').set(owner).expect(200)).body.actions as any[];
    expect(new Set(before.map((a) => a.kind))).toEqual(new Set(['metric', 'reading', 'proposal', 'settlement', 'void']));
    const settlements = before.filter((a) => a.kind === 'settlement');
    expect(settlements.length).toBeGreaterThan(0);
    for (const a of before.filter((x) => x.metricId === metric.id && x.kind !== 'metric')) expect(a.metricName).toBe(`${metric.name}-first`);

    // A later rename and the metric's deletion: every row written before stays exactly as it was.
    await app.http.put(`/api/metrics/${metric.id}`).set(owner).send({ name: `${metric.name}-second` }).expect(200);
    expect((await app.http.delete(`/api/metrics/${metric.id}`).set(owner)).status).toBe(204);
    expect((await app.http.get(`/api/metrics/${metric.id}`).set(owner)).status).toBe(404);
    const after = (await app.http.get('/api/data-room/actions?limit=200').set(owner).expect(200)).body.actions as any[];
    const byId = new Map(after.map((a) => [a.id, a]));
    for (const row of before) expect(byId.get(row.id)).toEqual(row);
    expect(after).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'metric', field: 'name', to: `${metric.name}-second`, metricName: `${metric.name}-second` })]));

    // Rows refuse to change, even by hand; only the workspace's own deletion removes them.
    await expect(app.deps.ds.query(`UPDATE data_room_actions SET reason = 'edited' WHERE workspace_id = $1`, [ws.id])).rejects.toThrow(/append-only/);
    await expect(app.deps.ds.query(`DELETE FROM data_room_actions WHERE workspace_id = $1`, [ws.id])).rejects.toThrow(/only with their workspace/);
    await deleteAndWait(app, `/api/workspaces/${ws.id}`, { 'X-Agent-Key': ws.owner.key });
    const [{ n }] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM data_room_actions WHERE workspace_id = $1`, [ws.id]);
    expect(n).toBe(0);
  });
});

import type { EntityManager } from 'typeorm';
import { rolledBack } from '../../src/db/dryRun';
import { voidBooksById } from '../../src/services/lifecycle';
import { createProposal } from '../../src/services/proposals';
import { runDeletion } from '../../src/services/deletions';
import { findWorkspace } from '../../src/services/workspaces';
import { buildWorkspace, registerAgent, mint, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';
import { waitForDeletion } from '../helpers/deletions';
import { startWorkers } from '../../workers';

/**
 * Issue 26 item 3: DELETE /workspaces/{id} of a workspace with history used to run as one
 * transaction of tens of seconds (4 requests unanswered within 30 s). It now answers 202 at once and
 * the deletions job runs it in bounded batches; killed between batches or failing a batch, it
 * resumes and ends with exactly what the old single transaction produced.
 */
let app: TestApp;
// Workers start inside the tests: a deletion is first seen queued, then run part-way by hand.
useTestApp((a) => (app = a), {}, { workers: false });

/**
 * The balances (nano, as text) of these accounts, or of every participant and the treasury: the money
 * a deletion must move exactly. Suites share the database, so a comparison names its accounts.
 */
async function balances(m: EntityManager | TestApp['deps']['ds'], ids?: readonly string[]): Promise<Record<string, string>> {
  const rows: Array<{ id: string; balance: string }> = ids
    ? await m.query(`SELECT id, balance::text AS balance FROM accounts WHERE id = ANY($1::text[]) ORDER BY id`, [ids])
    : await m.query(`SELECT id, balance::text AS balance FROM accounts WHERE kind <> 'pool' ORDER BY id`);
  return Object.fromEntries(rows.map((r) => [r.id, r.balance]));
}

/** Every participant account a workspace's deletion can pay: holders, order owners, funders, members, the owner. */
async function peopleOf(ws: TestWorkspace): Promise<string[]> {
  const rows: Array<{ id: string }> = await app.deps.ds.query(
    `WITH books AS (SELECT id FROM markets WHERE workspace_id = $1)
     SELECT 'agent:' || agent_id AS id FROM positions WHERE market_id IN (SELECT id FROM books)
     UNION SELECT 'agent:' || agent_id FROM limit_orders WHERE market_id IN (SELECT id FROM books)
     UNION SELECT 'agent:' || agent_id FROM market_funders WHERE market_id IN (SELECT id FROM books) AND agent_id IS NOT NULL
     UNION SELECT 'agent:' || agent_id FROM memberships WHERE workspace_id = $1
     UNION SELECT 'agent:' || owner_id FROM workspaces WHERE id = $1`,
    [ws.id],
  );
  return rows.map((r) => r.id);
}

/** What the old synchronous delete did to every balance: every live book voided in one transaction, rolled back. */
async function expectedAfterDeletion(ws: TestWorkspace, ids: readonly string[]): Promise<Record<string, string>> {
  return rolledBack(app.deps.ds, async (m) => {
    const live: Array<{ id: string }> = await m.query(`SELECT id FROM markets WHERE workspace_id = $1 AND status IN ('open','closed') ORDER BY id`, [ws.id]);
    await voidBooksById(m, live.map((r) => r.id), 'workspace deleted', app.clock.now());
    return balances(m, ids);
  });
}

async function countRows(ws: TestWorkspace): Promise<Record<string, number>> {
  const [r] = await app.deps.ds.query(
    `SELECT (SELECT count(*) FROM workspaces WHERE id = $1)::int AS workspaces,
            (SELECT count(*) FROM markets WHERE workspace_id = $1)::int AS markets,
            (SELECT count(*) FROM trades WHERE workspace_id = $1)::int AS trades,
            (SELECT count(*) FROM positions WHERE workspace_id = $1)::int AS positions,
            (SELECT count(*) FROM proposals WHERE workspace_id = $1)::int AS proposals,
            (SELECT count(*) FROM metrics WHERE workspace_id = $1)::int AS metrics,
            (SELECT count(*) FROM metric_readings WHERE workspace_id = $1)::int AS readings,
            (SELECT count(*) FROM limit_orders WHERE workspace_id = $1)::int AS orders,
            (SELECT count(*) FROM accounts a JOIN markets mk ON a.id = 'pool:' || mk.id WHERE mk.workspace_id = $1 AND a.balance <> 0)::int AS "fundedPools"`,
    [ws.id],
  );
  return r;
}

/**
 * A workspace with history: three metrics with readings, traded baseline books, funded proposals
 * with traded branches, a resting limit order, and `freeProposals` free proposals (each opens
 * unfunded books with their pool accounts, as the loop on main did).
 */
async function workspaceWithHistory(freeProposals: number): Promise<{ ws: TestWorkspace; traders: TestAgent[] }> {
  const ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
  const metrics = [];
  for (let i = 0; i < 3; i++) metrics.push(await createMetric(app, ws, { value: 300 + 100 * i }));
  const traders = [await trader(app, ws, 500), await trader(app, ws, 500)];
  for (const mt of metrics) {
    const [book] = await marketsOf(app, ws, mt.id);
    for (const [i, t] of traders.entries()) expect((await trade(app, ws, t, { marketId: book.id, direction: i ? 'lower' : 'higher', amount: 7 + i })).status).toBe(200);
  }
  for (let i = 0; i < 2; i++) {
    const p = await app.http.post('/api/proposals').set('X-Agent-Key', traders[i].key).set('X-Workspace-Id', ws.id).send({ title: `funded ${i}`, liquidity: 5 });
    expect(p.status).toBe(200);
    expect((await trade(app, ws, traders[1 - i], { marketId: p.body.conditionalMarkets[0].id, direction: 'higher', amount: 3 })).status).toBe(200);
  }
  const [book] = await marketsOf(app, ws, metrics[0].id);
  const order = await app.http.post('/api/predictions/orders').set('X-Agent-Key', traders[0].key).set('X-Workspace-Id', ws.id).send({ marketId: book.id, direction: 'higher', limit: 900, shares: 5 });
  expect(order.status).toBe(200);
  const row = (await findWorkspace(app.deps.ds, ws.id))!;
  const owner = { agentId: ws.owner.id, canManage: true, metricReadable: () => true, exempt: true };
  for (let i = 0; i < freeProposals; i += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, freeProposals - i) }, (_, k) => createProposal(app.deps, row, owner, { title: `free ${i + k}`, liquidity: 0 })),
    );
  }
  return { ws, traders };
}

describe('DELETE /workspaces/{id} of a workspace with history', () => {
  it('answers 202 at once, the workspace is gone for every request, and the job ends with exactly the old single transaction\'s money, even killed between batches and failing a batch', async () => {
    // Workers for the history only: they stop before the DELETE, so nothing runs the deletion yet.
    const building = await startWorkers(app.deps);
    const { ws, traders } = await workspaceWithHistory(400);
    await building.close();
    const before = await countRows(ws);
    expect(before.markets).toBeGreaterThan(2000);
    expect(before.trades).toBeGreaterThan(0);
    expect(before.orders).toBe(1);
    const people = await peopleOf(ws);
    expect(people.sort()).toEqual([ws.owner, ...traders].map((a) => `agent:${a.id}`).sort());
    const expected = await expectedAfterDeletion(ws, people);

    // No worker runs: the answer cannot depend on the work.
    const del = await app.http.delete(`/api/workspaces/${ws.id}`).set('X-Agent-Key', ws.owner.key);
    expect(del.status).toBe(202);
    expect(del.body).toMatchObject({ kind: 'workspace', targetId: ws.id, targetName: ws.slug, state: 'queued', statusUrl: `/api/deletions/${del.body.id}` });
    // The requester reads the progress; someone else does not see it.
    expect((await app.http.get(del.body.statusUrl).set('X-Agent-Key', ws.owner.key)).body.state).toBe('queued');
    expect((await app.http.get(del.body.statusUrl).set('X-Agent-Key', traders[0].key)).status).toBe(404);

    // Unusable while it is deleted: reads 404 saying so, trades and proposals refused, a second DELETE too.
    const read = await app.http.get('/api/predictions/markets').set('X-Workspace-Id', ws.id);
    expect(read.status).toBe(404);
    expect(read.body).toMatchObject({ code: 'workspace_not_found', deletionId: del.body.id });
    expect(read.body.error).toContain('being deleted');
    const [live] = await app.deps.ds.query(`SELECT id FROM markets WHERE workspace_id = $1 AND status = 'open' LIMIT 1`, [ws.id]);
    expect((await trade(app, ws, traders[0], { marketId: live.id, direction: 'higher', amount: 1 })).status).toBe(404);
    expect((await app.http.post('/api/proposals').set('X-Agent-Key', traders[0].key).set('X-Workspace-Id', ws.id).send({ title: 'late' })).status).toBe(404);
    expect((await app.http.delete(`/api/workspaces/${ws.id}`).set('X-Agent-Key', ws.owner.key)).status).toBe(404);

    // Killed between batches: a runner does a few small batches and stops.
    const part = await runDeletion(app.deps, del.body.id, { maxBatches: 4, limits: { books: 100, rows: 500 } });
    expect(part.batches).toBe(4);
    const mid = (await app.http.get(del.body.statusUrl).set('X-Agent-Key', ws.owner.key)).body;
    expect(mid).toMatchObject({ state: 'running', phase: 'books' });
    expect(mid.phases[0]).toMatchObject({ name: 'books', done: 300 });
    expect(mid.done).toBeLessThan(mid.total);

    // A batch fails once (the first market delete of this workspace), then the queued job resumes.
    await app.deps.ds.query(`CREATE SEQUENCE IF NOT EXISTS deletion_fault_once`);
    await app.deps.ds.query(`CREATE OR REPLACE FUNCTION deletion_fault_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF nextval('deletion_fault_once') = 1 THEN RAISE EXCEPTION 'injected: deletion batch fails once'; END IF; RETURN OLD; END $$`);
    const trigger = `deletion_fault_${ws.id.replace(/-/g, '')}`;
    await app.deps.ds.query(`CREATE TRIGGER ${trigger} BEFORE DELETE ON markets FOR EACH ROW WHEN (OLD.workspace_id = '${ws.id}') EXECUTE FUNCTION deletion_fault_once()`);
    try {
      await app.startWorkers();
      const { deletion } = await waitForDeletion(app, del);
      expect(deletion).toMatchObject({ state: 'done', phase: null, error: null });
      expect(deletion.done).toBe(deletion.total);
      const [{ n }] = await app.deps.ds.query(`SELECT last_value::int AS n FROM deletion_fault_once`);
      expect(n).toBeGreaterThan(1); // the fault fired, and the retry went past it
      console.log(`deletion of ${before.markets} books, ${before.trades} trades: ${deletion.batches} batches, longest ${deletion.longestBatchMs} ms`, deletion.phases);
    } finally {
      await app.deps.ds.query(`DROP TRIGGER IF EXISTS ${trigger} ON markets`);
    }

    expect(await countRows(ws)).toEqual({ workspaces: 0, markets: 0, trades: 0, positions: 0, proposals: 0, metrics: 0, readings: 0, orders: 0, fundedPools: 0 });
    // Every refund and pool remainder exactly once: each balance as the old single transaction left it.
    expect(await balances(app.deps.ds, people)).toEqual(expected);
    await expectLedgerSound(app.deps);
  }, 480_000);
});

describe('DELETE /agents/{id} of a participant with history', () => {
  it('moves its credits at once, then deletes its trades and positions in batches and the row last', async () => {
    await app.startWorkers();
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 10_000 });
    const mt = await createMetric(app, ws, { value: 500 });
    const [book] = await marketsOf(app, ws, mt.id);
    const bot = (await app.http.post('/api/agents').set('X-Agent-Key', ws.owner.key).send({ agentId: uniqueName('bot'), memberships: [{ workspaceId: ws.id }], initialCredits: 100 })).body;
    for (let i = 0; i < 12; i++) {
      const t = await app.http.post('/api/predictions/trade').set('X-Agent-Key', bot.apiKey).set('X-Workspace-Id', ws.id).send({ marketId: book.id, direction: i % 2 ? 'lower' : 'higher', amount: 1 });
      expect(t.status).toBe(200);
    }
    const order = await app.http.post('/api/predictions/orders').set('X-Agent-Key', bot.apiKey).set('X-Workspace-Id', ws.id).send({ marketId: book.id, direction: 'higher', limit: 900, shares: 5 });
    expect(order.status).toBe(200);
    const [{ balance }] = await app.deps.ds.query(`SELECT balance::text AS balance FROM accounts WHERE id = $1`, [`agent:${bot.agentId}`]);
    const reserve = BigInt((await app.deps.ds.query(`SELECT reserve::text AS r FROM limit_orders WHERE agent_id = $1`, [bot.agentId]))[0].r);
    const ownerBefore = BigInt((await balances(app.deps.ds))[`agent:${ws.owner.id}`]);

    const del = await app.http.delete(`/api/agents/${bot.agentId}`).set('X-Agent-Key', ws.owner.key);
    expect(del.status).toBe(202);
    // Its open order's reserve came back to it first, then the whole balance to its creator.
    expect(BigInt(Math.round(del.body.creditsReturned * 1e9))).toBe(BigInt(balance) + reserve);
    expect((await app.http.get('/api/agents/me').set('X-Agent-Key', bot.apiKey)).status).toBe(401);
    const { deletion } = await waitForDeletion(app, del);
    expect(deletion).toMatchObject({ kind: 'participant', state: 'done' });
    const [left] = await app.deps.ds.query(
      `SELECT (SELECT count(*) FROM agents WHERE id = $1)::int AS agents, (SELECT count(*) FROM trades WHERE agent_id = $1)::int AS trades,
              (SELECT count(*) FROM positions WHERE agent_id = $1)::int AS positions, (SELECT count(*) FROM limit_orders WHERE agent_id = $1)::int AS orders`,
      [bot.agentId],
    );
    expect(left).toEqual({ agents: 0, trades: 0, positions: 0, orders: 0 });
    expect(BigInt((await balances(app.deps.ds))[`agent:${ws.owner.id}`]) - ownerBefore).toBe(BigInt(balance) + reserve);
    await expectLedgerSound(app.deps);
  }, 60_000);

  it('GET /deletions/{id} of an unknown or malformed id is 404', async () => {
    const a = await registerAgent(app);
    await mint(app, a.id, 1);
    for (const id of ['00000000-0000-0000-0000-000000000000', 'nope']) {
      const res = await app.http.get(`/api/deletions/${id}`).set('X-Agent-Key', a.key);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });
});

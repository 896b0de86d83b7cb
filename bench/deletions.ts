/**
 * Deleting a workspace with history (issue 26 item 3): the old single transaction against the
 * batched deletion job, on two identical workspaces. Prints each one's wall time and its longest
 * single transaction, and checks the ledger invariant after.
 *   npx tsx bench/deletions.ts [--metrics 2000]
 * Each metric opens 5 baseline books (its default horizons), each book gets 2 holders seeded
 * directly (positions backed by the pool) and a trade row each, so --metrics 6600 is about the
 * 33,000 pool accounts of the issue.
 */
import { loadConfig } from '../src/config';
import { ManualClock } from '../src/deps';
import { inTransaction } from '../src/db/tx';
import { toNano } from '../src/domain/money';
import { refreshHorizons, voidBooksById } from '../src/services/lifecycle';
import { accountId, checkLedgerInvariant, transfer } from '../src/services/ledger';
import { createAgent } from '../src/services/identity';
import { createWorkspace } from '../src/services/workspaces';
import { requestWorkspaceDeletion, runDeletion } from '../src/services/deletions';
import { bootDeps, closeDeps } from '../src/runtime';
import type { Deps } from '../src/deps';
import { dropDatabase, fmt, recreateDatabase } from './lib';

const N = Number(process.argv[process.argv.indexOf('--metrics') + 1]) || 2000;

async function seedWorkspace(deps: Deps, ownerId: string, holders: string[], name: string): Promise<string> {
  const ws = await inTransaction(deps.ds, (m) => createWorkspace(m, ownerId, { name }));
  await deps.ds.query(
    `INSERT INTO metrics (workspace_id, name, value, total, sort_order, time_preference, measured_at)
     SELECT $1, 'm' || g, 500, 500, g, '{"enabled":true,"halfLife":1}'::jsonb, $2 FROM generate_series(1, $3) g`,
    [ws.id, deps.clock.now(), N],
  );
  await refreshHorizons(deps, { workspaceId: ws.id });
  await deps.ds.query(
    `INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost)
     SELECT mk.id, h.agent, mk.workspace_id, 2000000000, 0, 1000000000 FROM markets mk CROSS JOIN unnest($2::text[]) AS h(agent) WHERE mk.workspace_id = $1`,
    [ws.id, holders],
  );
  // The holders' stakes, as trades would have moved them: 1 credit each from the holder into the pool.
  await deps.ds.query(
    `WITH legs AS (SELECT gen_random_uuid() AS t, mk.id AS market, h.agent FROM markets mk CROSS JOIN unnest($2::text[]) AS h(agent) WHERE mk.workspace_id = $1),
          e AS (INSERT INTO ledger_entries (transfer_id, account_id, amount, kind, ref)
                SELECT t, 'agent:' || agent, -1000000000, 'trade', market::text FROM legs
                UNION ALL SELECT t, 'pool:' || market, 1000000000, 'trade', market::text FROM legs RETURNING account_id, amount)
     UPDATE accounts a SET balance = a.balance + s.d FROM (SELECT account_id, sum(amount) AS d FROM e GROUP BY account_id) s WHERE a.id = s.account_id`,
    [ws.id, holders],
  );
  await deps.ds.query(
    `INSERT INTO trades (market_id, agent_id, workspace_id, kind, direction, shares, cost, probability_before, probability_after, consensus_before, consensus_after)
     SELECT market_id, agent_id, workspace_id, 'buy', 'higher', 2000000000, 1000000000, 0.5, 0.51, 500, 510 FROM positions WHERE workspace_id = $1`,
    [ws.id],
  );
  return ws.id;
}

async function main() {
  const dbName = 'mpps_bench_deletions';
  const url = await recreateDatabase(dbName);
  const clock = new ManualClock(new Date('2026-11-21T12:00:00Z'));
  const config = loadConfig({ ...process.env, DATABASE_URL: url, QUEUE_PREFIX: `benchd${Date.now()}`, LOG_LEVEL: 'warn' });
  const deps = await bootDeps(config, { migrate: true, clock, poolSize: 10 });
  try {
    const { ownerId, holders } = await inTransaction(deps.ds, async (m) => {
      const ownerId = await createAgent(m, { nickname: `owner${Date.now() % 1e6}` });
      await transfer(m, { from: accountId.issuance, to: accountId.agent(ownerId), amount: toNano(2 * N * 5 * 100 + 1000), kind: 'mint' });
      const holders: string[] = [];
      for (let i = 0; i < 2; i++) {
        holders.push(await createAgent(m, { nickname: `h${i}x${Date.now() % 1e6}` }));
        await transfer(m, { from: accountId.issuance, to: accountId.agent(holders[i]), amount: toNano(2 * N * 5 + 10), kind: 'mint' });
      }
      return { ownerId, holders };
    });
    const oldWs = await seedWorkspace(deps, ownerId, holders, 'bench old');
    const newWs = await seedWorkspace(deps, ownerId, holders, 'bench new');
    const [c] = await deps.ds.query(
      `SELECT (SELECT count(*) FROM markets WHERE workspace_id = $1)::int AS books, (SELECT count(*) FROM positions WHERE workspace_id = $1)::int AS positions,
              (SELECT count(*) FROM trades WHERE workspace_id = $1)::int AS trades`,
      [oldWs],
    );
    console.log(`# bench/deletions: two workspaces of ${N} metrics, ${c.books} books, ${c.positions} positions, ${c.trades} trades each`);

    // The code on main before issue 26: every live book voided, then the workspace row, in ONE transaction.
    let t0 = performance.now();
    await inTransaction(deps.ds, async (m) => {
      await m.query(`SELECT id FROM workspaces WHERE id = $1 FOR UPDATE`, [oldWs]);
      const live: Array<{ id: string }> = await m.query(`SELECT id FROM markets WHERE workspace_id = $1 AND status IN ('open','closed') ORDER BY id`, [oldWs]);
      await voidBooksById(m, live.map((r) => r.id), 'workspace deleted', clock.now());
      await m.query(`DELETE FROM workspaces WHERE id = $1`, [oldWs]);
    });
    const oldMs = performance.now() - t0;
    console.log(`old: one transaction of ${fmt(oldMs / 1000, 2)} s (the longest transaction is the whole delete)`);

    t0 = performance.now();
    const d = await requestWorkspaceDeletion(deps, newWs, ownerId);
    const acceptMs = performance.now() - t0;
    const run = await runDeletion(deps, d.id);
    const newMs = performance.now() - t0;
    const [row] = await deps.ds.query(`SELECT batches, longest_batch_ms, phases FROM deletions WHERE id = $1`, [d.id]);
    console.log(`new: accepted in ${fmt(acceptMs, 1)} ms; the job ran ${run.batches} batches in ${fmt(newMs / 1000, 2)} s; longest transaction ${row.longest_batch_ms} ms`);
    for (const p of row.phases) console.log(`  phase ${p.name}: ${p.done} of ${p.total}, longest batch ${p.longestBatchMs ?? 0} ms`);
    const inv = await checkLedgerInvariant(deps.ds);
    console.log(`ledger invariant after both: ${inv.ok ? 'holds' : `BROKEN ${JSON.stringify({ ...inv, total: inv.total.toString() })}`}`);
  } finally {
    await closeDeps(deps);
    await dropDatabase(dbName);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

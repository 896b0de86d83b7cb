/**
 * One spawning pass over N metrics with 5 horizons each, then one resolution pass over N due books
 * with 20 holders each (through the real lanes and workers). Prints times and peak RSS.
 *   npx tsx bench/horizons.ts [--metrics 10000]
 * Holders are seeded directly (positions backed by the books' pools), not traded one by one:
 * the bench measures the passes, not trading.
 */
import { loadConfig } from '../src/config';
import { ManualClock } from '../src/deps';
import { inTransaction } from '../src/db/tx';
import { toNano } from '../src/domain/money';
import { refreshHorizons } from '../src/services/lifecycle';
import { resolveDueNow } from '../src/services/lifecycle';
import { accountId, checkLedgerInvariant, transfer } from '../src/services/ledger';
import { createAgent } from '../src/services/identity';
import { createWorkspace } from '../src/services/workspaces';
import { bootDeps, closeDeps } from '../src/runtime';
import { startWorkers } from '../workers';
import { dropDatabase, fmt, peakRssMb, recreateDatabase } from './lib';

const N = Number(process.argv[process.argv.indexOf('--metrics') + 1]) || 10_000;
const HOLDERS = 20;

async function main() {
  const dbName = 'mpps_bench_horizons';
  const url = await recreateDatabase(dbName);
  const clock = new ManualClock(new Date('2026-11-21T12:00:00Z'));
  const config = loadConfig({ ...process.env, DATABASE_URL: url, QUEUE_PREFIX: `benchh${Date.now()}`, LOG_LEVEL: 'warn' });
  const deps = await bootDeps(config, { migrate: true, clock, poolSize: 20 });
  const workers = await startWorkers(deps);
  try {
    const { ownerId, wsId, holders } = await inTransaction(deps.ds, async (m) => {
      const ownerId = await createAgent(m, { nickname: `owner${Date.now() % 1e6}` });
      await transfer(m, { from: accountId.issuance, to: accountId.agent(ownerId), amount: toNano(N * 5 * 100 + 1000), kind: 'mint' });
      const ws = await createWorkspace(m, ownerId, { name: 'bench horizons' });
      const holders: string[] = [];
      for (let i = 0; i < HOLDERS; i++) holders.push(await createAgent(m, { nickname: `h${i}x${Date.now() % 1e6}` }));
      return { ownerId, wsId: ws.id, holders };
    });
    // N metrics with the default time preference (5 horizons at this instant), inserted in bulk.
    await deps.ds.query(
      `INSERT INTO metrics (workspace_id, name, value, total, sort_order, time_preference, measured_at)
       SELECT $1, 'm' || g, 500, 500, g, '{"enabled":true,"halfLife":1}'::jsonb, $2 FROM generate_series(1, $3) g`,
      [wsId, clock.now(), N],
    );
    console.log(`# bench/horizons: ${N} metrics, ${HOLDERS} holders per book; owner ${ownerId}`);

    let t0 = performance.now();
    const spawned = await refreshHorizons(deps, { workspaceId: wsId });
    const spawnMs = performance.now() - t0;
    console.log(`spawning pass: ${spawned.opened} books for ${spawned.metrics} metrics in ${fmt(spawnMs / 1000, 2)} s (${fmt(spawned.opened / (spawnMs / 1000), 0)} books/s), peak RSS ${fmt(peakRssMb(), 0)} MB`);
    t0 = performance.now();
    const again = await refreshHorizons(deps, { workspaceId: wsId });
    console.log(`second pass (nothing to open): opened ${again.opened} in ${fmt((performance.now() - t0) / 1000, 2)} s`);

    // Seed 20 holders on each current-month book, backed by the pool, and a reading inside the month.
    await deps.ds.query(
      `INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost)
       SELECT mk.id, h.agent, mk.workspace_id, CASE WHEN h.i % 2 = 0 THEN 2000000000 ELSE 0 END, CASE WHEN h.i % 2 = 1 THEN 2000000000 ELSE 0 END, 1000000000
         FROM markets mk CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS h(agent, i)
        WHERE mk.workspace_id = $1 AND mk.target_date = '2026-11'`,
      [wsId, holders],
    );
    await deps.ds.query(
      `INSERT INTO metric_readings (metric_id, workspace_id, at, as_of, value, na, kind)
       SELECT id, workspace_id, '2026-11-25T00:00:00Z', '2026-11-25T00:00:00Z', 600, false, 'update' FROM metrics WHERE workspace_id = $1`,
      [wsId],
    );
    clock.set(new Date('2026-12-01T00:00:30Z'));
    t0 = performance.now();
    const res = await resolveDueNow(deps, wsId);
    const resolveMs = performance.now() - t0;
    console.log(
      `resolution pass: ${res.resolved.length} books resolved (${res.checked} checked, ${res.pending.length} pending) with ${HOLDERS} holders each in ${fmt(resolveMs / 1000, 2)} s (${fmt(res.resolved.length / (resolveMs / 1000), 0)} books/s), peak RSS ${fmt(peakRssMb(), 0)} MB`,
    );
    const inv = await checkLedgerInvariant(deps.ds);
    console.log(`ledger invariant after both passes: ${inv.ok ? 'holds' : `BROKEN ${JSON.stringify({ ...inv, total: inv.total.toString() })}`}`);
  } finally {
    await workers.close();
    await closeDeps(deps);
    await dropDatabase(dbName);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

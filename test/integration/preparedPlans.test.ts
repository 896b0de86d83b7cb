import type { QueryRunner } from 'typeorm';
import { PLAN_TTL_MS, queryPrepared } from '../../src/db/prepared';
import { useTestApp, type TestApp } from '../helpers/harness';

/**
 * A named statement's generic plan is made on the tables as they were (db/prepared.ts): made while a
 * table was empty it scans the whole table, and a connection that kept it would pay for every row
 * added since. Each connection drops its plans every PLAN_TTL_MS, so the next plan sees the table
 * as it is now.
 */
describe('named statements are planned again on the tables as they grow', () => {
  let app: TestApp;
  useTestApp((a) => (app = a));

  const TEXT = 'SELECT count(*)::int AS n FROM plan_probe WHERE id = ANY($1::text[])';

  /** The plan the connection holds for the statement, as EXPLAIN EXECUTE shows it (no new plan is made). */
  async function heldPlan(qr: QueryRunner): Promise<string> {
    const [st] = await qr.query('SELECT name FROM pg_prepared_statements WHERE statement = $1', [TEXT]);
    expect(st).toBeDefined();
    const rows: Array<{ 'QUERY PLAN': string }> = await qr.query(`EXPLAIN EXECUTE ${st.name}('{k1,k2}')`);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  async function run(qr: QueryRunner): Promise<number> {
    await qr.startTransaction();
    try {
      const [r] = await queryPrepared<{ n: number }>(qr.manager, TEXT, [['k1', 'k2']]);
      return r.n;
    } finally {
      await qr.commitTransaction();
    }
  }

  it('a plan made on a small table is replaced once it is PLAN_TTL_MS old', async () => {
    // A small table with statistics (as a young database's journal is after its first autovacuum);
    // autovacuum off, so nothing but the plan's age makes the connection plan it again. Unlogged: the
    // rows go in quickly.
    await app.deps.ds.query('CREATE UNLOGGED TABLE plan_probe (id text PRIMARY KEY, pad text NOT NULL) WITH (autovacuum_enabled = false)');
    await app.deps.ds.query(`INSERT INTO plan_probe SELECT 's' || g, 'x' FROM generate_series(1, 5) g`);
    await app.deps.ds.query('ANALYZE plan_probe');
    // One connection throughout: plans are per connection. The plans' clock is held still, so the
    // premise does not depend on how long the 50,000 rows take on a loaded machine (in CI they twice
    // took longer than the plan's lifetime), and the lifetime passes when the test says so.
    let now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    const qr = app.deps.ds.createQueryRunner();
    await qr.connect();
    try {
      expect(await run(qr)).toBe(0);
      expect(await heldPlan(qr)).toMatch(/Seq Scan on plan_probe/);
      await app.deps.ds.query(`INSERT INTO plan_probe SELECT 'k' || g, repeat('x', 200) FROM generate_series(1, 50000) g`);
      // Within the plan's lifetime the connection keeps the small table's plan: the premise.
      expect(await run(qr)).toBe(2);
      expect(await heldPlan(qr)).toMatch(/Seq Scan on plan_probe/);
      now += PLAN_TTL_MS + 1;
      expect(await run(qr)).toBe(2);
      const plan = await heldPlan(qr);
      expect(plan).not.toMatch(/Seq Scan/);
      expect(plan).toMatch(/plan_probe_pkey/);
    } finally {
      clock.mockRestore();
      await qr.release();
      await app.deps.ds.query('DROP TABLE plan_probe');
    }
  });
});

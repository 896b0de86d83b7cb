import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 23, the standings out of the resolving transaction: a resolved book whose standings are not
 * aggregated yet. The resolving transaction inserts the row; the `standings` job deletes it in the
 * transaction that adds the book to the aggregates (the per-book marker: a job that runs twice finds
 * no row and adds nothing). Books resolved before this migration were aggregated when they resolved.
 */
export class StandingsPending1763901300000 implements MigrationInterface {
  name = 'StandingsPending1763901300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE standings_pending (
      market_id uuid PRIMARY KEY,
      resolved_at timestamptz NOT NULL
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS standings_pending`);
  }
}

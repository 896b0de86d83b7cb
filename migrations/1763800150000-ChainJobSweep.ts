import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The sweep that gives open deposits and withdrawals a live job again (their job lost with Redis):
 * withdrawals count their checks like deposits (the live job's id carries the number), both record
 * when a job last looked at them, and a partial index keeps the sweep on the open rows only.
 */
export class ChainJobSweep1763800150000 implements MigrationInterface {
  name = 'ChainJobSweep1763800150000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deposits ADD COLUMN checked_at timestamptz`);
    await q.query(`ALTER TABLE withdrawals ADD COLUMN checks integer NOT NULL DEFAULT 0, ADD COLUMN checked_at timestamptz`);
    await q.query(`CREATE INDEX deposits_open ON deposits (checked_at) WHERE status = 'pending' OR (status = 'credited' AND NOT final)`);
    await q.query(`CREATE INDEX withdrawals_open ON withdrawals (checked_at) WHERE status IN ('queued','signed')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS withdrawals_open`);
    await q.query(`DROP INDEX IF EXISTS deposits_open`);
    await q.query(`ALTER TABLE withdrawals DROP COLUMN checked_at, DROP COLUMN checks`);
    await q.query(`ALTER TABLE deposits DROP COLUMN checked_at`);
  }
}

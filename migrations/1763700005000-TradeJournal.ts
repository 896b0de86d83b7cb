import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every trade request keeps the job that applies it, so a request whose job was lost (a killed API
 * between insert and enqueue, a Redis restart without persistence) can be enqueued again from
 * Postgres and always reaches a definite outcome.
 */
export class TradeJournal1763700005000 implements MigrationInterface {
  name = 'TradeJournal1763700005000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trade_requests ADD COLUMN job jsonb, ADD COLUMN recovered_at timestamptz`);
    await q.query(`CREATE INDEX trade_requests_pending ON trade_requests (created_at) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS trade_requests_pending`);
    await q.query(`ALTER TABLE trade_requests DROP COLUMN IF EXISTS job, DROP COLUMN IF EXISTS recovered_at`);
  }
}

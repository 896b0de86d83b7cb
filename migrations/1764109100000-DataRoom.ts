import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The data room (issue 25): GET /data-room/actions reads the workspace's acts from the tables that
 * already record them (metric_revisions, metric_updates, decided proposals, resolved and voided
 * books). What was missing is the reason of an early settlement on the book itself.
 */
export class DataRoom1764109100000 implements MigrationInterface {
  name = 'DataRoom1764109100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE markets ADD COLUMN settle_reason text`);
    await q.query(`CREATE INDEX markets_ended ON markets (workspace_id, resolved_at) WHERE resolved_at IS NOT NULL`);
    await q.query(`CREATE INDEX proposals_decided ON proposals (workspace_id, decided_at) WHERE decided_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS proposals_decided`);
    await q.query(`DROP INDEX IF EXISTS markets_ended`);
    await q.query(`ALTER TABLE markets DROP COLUMN settle_reason`);
  }
}

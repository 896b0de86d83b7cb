import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 59: "Measured" is the latest numeric reading, not the first. metrics.measured_at stays the
 * earliest (it ends resolvesNaUntilMeasured for good); last_measured_at is the newest reading's
 * asOf, kept by every insert of readings and, like measured_at, never cleared by a purge. And a
 * metric's unit (spec §2.2's condensed shape: string or null), which was always null.
 */
export class MetricReadingFacts1764111590000 implements MigrationInterface {
  name = 'MetricReadingFacts1764111590000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE metrics ADD COLUMN IF NOT EXISTS last_measured_at timestamptz`);
    await q.query(`ALTER TABLE metrics ADD COLUMN IF NOT EXISTS unit text`);
    await q.query(
      `UPDATE metrics mt SET last_measured_at = r.newest
         FROM (SELECT metric_id, max(as_of) AS newest FROM metric_readings WHERE NOT na GROUP BY metric_id) r
        WHERE mt.id = r.metric_id`,
    );
    // A metric whose readings were purged keeps what it had: the earliest is the best still known.
    await q.query(`UPDATE metrics SET last_measured_at = measured_at WHERE last_measured_at IS NULL AND measured_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE metrics DROP COLUMN IF EXISTS last_measured_at`);
    await q.query(`ALTER TABLE metrics DROP COLUMN IF EXISTS unit`);
  }
}

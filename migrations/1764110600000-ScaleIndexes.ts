import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 60: GET /agents/mine finds the caller and every participant it made, owns or claimed
 * (`id = $1 OR parent_id = $1 OR created_by = $1 OR claimed_by = $1`): parent_id and created_by had
 * indexes, claimed_by none, so the OR could not become a bitmap of index scans and the plan read
 * every participant (test/integration/plans.test.ts).
 */
export class ScaleIndexes1764110600000 implements MigrationInterface {
  name = 'ScaleIndexes1764110600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS agents_claimed_by ON agents (claimed_by) WHERE claimed_by IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS agents_claimed_by`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Large deletions as jobs (issue 26 item 3): a workspace or participant deletion is a row here, run
 * by the `deletions` job in batches of bounded size, each its own short transaction; its progress
 * (phase, rows done of total per phase) is what GET /deletions/{id} shows. One unfinished (not done)
 * deletion per target. workspaces.deleting_at marks a workspace being deleted: it resolves to nothing.
 */
export class Deletions1764109600000 implements MigrationInterface {
  name = 'Deletions1764109600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workspaces ADD COLUMN deleting_at timestamptz`);
    await q.query(`CREATE TABLE deletions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      kind text NOT NULL CONSTRAINT deletions_kind_check CHECK (kind IN ('workspace','participant')),
      target_id text NOT NULL,
      target_name text NOT NULL DEFAULT '',
      requested_by text,
      state text NOT NULL DEFAULT 'queued' CONSTRAINT deletions_state_check CHECK (state IN ('queued','running','done','failed')),
      phase integer NOT NULL DEFAULT 0,
      phases jsonb NOT NULL DEFAULT '[]',
      batches integer NOT NULL DEFAULT 0,
      longest_batch_ms integer NOT NULL DEFAULT 0,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz)`);
    await q.query(`CREATE UNIQUE INDEX deletions_active ON deletions (kind, target_id) WHERE state <> 'done'`);
    await q.query(`CREATE INDEX deletions_unfinished ON deletions (updated_at) WHERE state <> 'done'`);
    // A workspace's books are deleted in batches: the cascade from markets to limit_orders needs an index.
    await q.query(`CREATE INDEX limit_orders_market ON limit_orders (market_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX limit_orders_market`);
    await q.query(`DROP TABLE deletions`);
    await q.query(`ALTER TABLE workspaces DROP COLUMN deleting_at`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Manual markets (issue 25, spec §5.4): a book opened by hand (POST /predictions/markets) is marked
 * `manual`, so the horizon pass never retires it as a stale date. workspace_refreshes throttles
 * POST /predictions/markets/refresh without force to once a minute per workspace (a table of its
 * own: an update of workspaces would flush every cached caller).
 */
export class ManualMarkets1764109400000 implements MigrationInterface {
  name = 'ManualMarkets1764109400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE markets ADD COLUMN manual boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE TABLE workspace_refreshes (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
      refreshed_at timestamptz NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE workspace_refreshes`);
    await q.query(`ALTER TABLE markets DROP COLUMN manual`);
  }
}

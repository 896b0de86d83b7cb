import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Metrics1763700001000 implements MigrationInterface {
  name = 'Metrics1763700001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE metrics (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      value double precision NOT NULL DEFAULT 0,
      formula text NOT NULL DEFAULT '0',
      total double precision,
      formula_error text,
      depth int NOT NULL DEFAULT 0,
      sort_order int NOT NULL,
      is_leaf boolean NOT NULL DEFAULT true,
      market_range_max double precision NOT NULL DEFAULT 1000 CHECK (market_range_max > 0),
      resets_every text CHECK (resets_every IN ('hour','day','week','month','year')),
      opens_at double precision,
      resolves_na_until_measured boolean NOT NULL DEFAULT false,
      time_preference jsonb,
      liquidity_credits bigint CHECK (liquidity_credits >= 0),
      market_title text,
      settlement_lag_minutes int CHECK (settlement_lag_minutes BETWEEN 0 AND 129600),
      measured_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX metrics_name ON metrics (workspace_id, lower(name))`);
    await q.query(`CREATE INDEX metrics_order ON metrics (workspace_id, depth, sort_order)`);

    await q.query(`CREATE TABLE metric_readings (
      id bigserial PRIMARY KEY,
      metric_id uuid NOT NULL REFERENCES metrics(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      at timestamptz NOT NULL DEFAULT now(),
      as_of timestamptz NOT NULL,
      value double precision,
      na boolean NOT NULL DEFAULT false,
      kind text NOT NULL,
      note text)`);
    await q.query(`CREATE INDEX metric_readings_metric ON metric_readings (metric_id, as_of)`);
    await q.query(`CREATE INDEX metric_readings_workspace ON metric_readings (workspace_id)`);

    // Append-only: no FK to metrics, so the log outlives a deleted metric.
    await q.query(`CREATE TABLE metric_revisions (
      id bigserial PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      metric_id uuid NOT NULL,
      field text NOT NULL CHECK (field IN ('name','description')),
      old_value text,
      new_value text NOT NULL,
      agent_id text,
      at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX metric_revisions_workspace ON metric_revisions (workspace_id, id)`);
    await q.query(`CREATE FUNCTION metric_revisions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'metric_revisions is append-only'; END $$`);
    await q.query(`CREATE TRIGGER metric_revisions_no_update BEFORE UPDATE ON metric_revisions
      FOR EACH ROW EXECUTE FUNCTION metric_revisions_append_only()`);

    // The value-change history behind GET /updates (backfills write none).
    await q.query(`CREATE TABLE metric_updates (
      id bigserial PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      metric_id uuid NOT NULL,
      metric_name text NOT NULL,
      old_value double precision,
      new_value double precision,
      na boolean NOT NULL DEFAULT false,
      as_of timestamptz NOT NULL,
      note text,
      agent_id text,
      at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX metric_updates_workspace ON metric_updates (workspace_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['metric_updates', 'metric_revisions', 'metric_readings', 'metrics']) await q.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
    await q.query(`DROP FUNCTION IF EXISTS metric_revisions_append_only()`);
  }
}

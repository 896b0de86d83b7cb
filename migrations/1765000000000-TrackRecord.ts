import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 68: the track record, one row per decided proposal, metric and target date. Written when the
 * decision is taken (both branches' consensus, the last reading, the metric's average change so far)
 * and scored when the decided branch's book resolves or is voided; reads only sum the stored scores.
 * Decisions taken before this migration have no row (see decisions.md, issue 68).
 */
export class TrackRecord1765000000000 implements MigrationInterface {
  name = 'TrackRecord1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS track_record (
      id bigserial PRIMARY KEY,
      workspace_id uuid NOT NULL,
      proposal_id uuid NOT NULL REFERENCES proposals(id) ON DELETE CASCADE,
      metric_id uuid NOT NULL REFERENCES metrics(id) ON DELETE CASCADE,
      target_date text NOT NULL,
      decided_market_id uuid NOT NULL UNIQUE,
      decision text NOT NULL CHECK (decision IN ('approved','declined')),
      decided_at timestamptz NOT NULL,
      range_min double precision NOT NULL,
      range_max double precision NOT NULL,
      approved_consensus double precision,
      declined_consensus double precision,
      advice text CHECK (advice IN ('approved','declined')),
      last_reading double precision,
      average_change double precision,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','realised','voided')),
      realised_value double precision,
      settled_at timestamptz,
      market_error double precision,
      persistence_error double precision,
      average_change_error double precision,
      direction_held boolean,
      average_change_direction_held boolean,
      forecast_p double precision,
      outcome_v double precision)`);
    await q.query(`CREATE INDEX IF NOT EXISTS track_record_workspace ON track_record (workspace_id, id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS track_record_metric ON track_record (metric_id, settled_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS track_record`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The score and earnings sums a resolution adds (domain/calibration), in units of 1e-9 and nano-credits. */
const SUMS = `
      trades integer NOT NULL DEFAULT 0,
      volume bigint NOT NULL DEFAULT 0,
      settled bigint NOT NULL DEFAULT 0,
      forecasts integer NOT NULL DEFAULT 0,
      sq_err bigint NOT NULL DEFAULT 0,
      abs_err bigint NOT NULL DEFAULT 0,
      bin_count bigint[] NOT NULL,
      bin_p bigint[] NOT NULL,
      bin_v bigint[] NOT NULL`;

/**
 * Participants' standings (issue 23): what each resolved book added for each holder
 * (participant_results), the running sums per participant, workspace and metric (participant_stats),
 * seasons and their own sums (season_stats), and how each workspace's final consensus compared with the
 * realised value by horizon length (benchmark_stats). All written in the book's resolving transaction.
 */
export class Standings1763802300000 implements MigrationInterface {
  name = 'Standings1763802300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE participant_results (
      agent_id text NOT NULL,
      market_id uuid NOT NULL,
      workspace_id uuid NOT NULL,
      metric_id uuid NOT NULL,
      resolved_at timestamptz NOT NULL,${SUMS},
      PRIMARY KEY (agent_id, market_id)
    )`);
    await q.query(`CREATE INDEX participant_results_agent ON participant_results (agent_id, resolved_at)`);
    await q.query(`CREATE INDEX participant_results_resolved ON participant_results (resolved_at)`);
    await q.query(`CREATE TABLE participant_stats (
      agent_id text NOT NULL,
      workspace_id uuid NOT NULL,
      metric_id uuid NOT NULL,
      resolved_markets integer NOT NULL DEFAULT 0,${SUMS},
      last_resolved_at timestamptz,
      PRIMARY KEY (agent_id, workspace_id, metric_id)
    )`);
    await q.query(`CREATE INDEX participant_stats_workspace ON participant_stats (workspace_id, metric_id)`);
    await q.query(`CREATE TABLE seasons (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      starts_at timestamptz NOT NULL,
      ends_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT seasons_period_check CHECK (ends_at > starts_at)
    )`);
    await q.query(`CREATE INDEX seasons_period ON seasons (starts_at, ends_at)`);
    await q.query(`CREATE TABLE season_stats (
      season_id uuid NOT NULL,
      agent_id text NOT NULL,
      workspace_id uuid NOT NULL,
      metric_id uuid NOT NULL,
      resolved_markets integer NOT NULL DEFAULT 0,${SUMS},
      last_resolved_at timestamptz,
      PRIMARY KEY (season_id, agent_id, workspace_id, metric_id),
      CONSTRAINT season_stats_season_id_fkey FOREIGN KEY (season_id) REFERENCES seasons(id) ON DELETE CASCADE
    )`);
    await q.query(`CREATE TABLE benchmark_stats (
      workspace_id uuid NOT NULL,
      horizon text NOT NULL,
      books integer NOT NULL DEFAULT 0,
      abs_err bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (workspace_id, horizon),
      CONSTRAINT benchmark_stats_horizon_check CHECK (horizon IN ('day','week','month','year','longer'))
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS benchmark_stats`);
    await q.query(`DROP TABLE IF EXISTS season_stats`);
    await q.query(`DROP TABLE IF EXISTS seasons`);
    await q.query(`DROP TABLE IF EXISTS participant_stats`);
    await q.query(`DROP TABLE IF EXISTS participant_results`);
  }
}

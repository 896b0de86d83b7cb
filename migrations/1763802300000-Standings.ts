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
/**
 * The standings of books resolved before this migration, computed in SQL exactly as
 * domain/calibration computes them when a book resolves (the same IEEE operations, each term rounded
 * once to 1e-9), so the rows match what recordBookStandings would have written. `agentIds` narrows it
 * (the test recomputes its own participants); null recomputes everyone.
 */
export async function backfillStandings(q: { query(sql: string, params?: unknown[]): Promise<unknown> }, agentIds: string[] | null = null): Promise<void> {
  const bins = (expr: string) =>
    `ARRAY[${Array.from({ length: 10 }, (_, k) => `coalesce(sum(${expr}) FILTER (WHERE y.kind <> 'redeem' AND y.bin = ${k}), 0)`).join(', ')}]::bigint[]`;
  const zeros = `array_fill(0::bigint, ARRAY[10])`;
  // One pass over the resolved books' trades, grouped by book and holder (a hash aggregate), then the positions.
  await q.query(
    `WITH y AS (
       SELECT t.market_id, t.agent_id, t.kind, abs(t.cost) AS vol, x.p, x.v,
              abs(least(mk.range_max, greatest(mk.range_min, t.consensus_after)) - least(mk.range_max, greatest(mk.range_min, mk.resolved_value))) / (mk.range_max - mk.range_min) AS e,
              least(9, greatest(0, floor(x.p * 10)))::int AS bin
         FROM trades t JOIN markets mk ON mk.id = t.market_id AND mk.status = 'resolved' AND mk.resolved_value IS NOT NULL
         CROSS JOIN LATERAL (SELECT least(1::float8, greatest(0::float8, t.probability_after)) AS p,
                                    least(1::float8, greatest(0::float8, (mk.resolved_value - mk.range_min) / (mk.range_max - mk.range_min))) AS v) x
        WHERE ($1::text[] IS NULL OR t.agent_id = ANY($1))
     ), s AS (
       SELECT y.market_id, y.agent_id, count(*)::int AS trades, sum(y.vol)::bigint AS volume,
              count(*) FILTER (WHERE y.kind <> 'redeem')::int AS forecasts,
              coalesce(sum(round((y.p - y.v) * (y.p - y.v) * 1e9::float8)::bigint) FILTER (WHERE y.kind <> 'redeem'), 0)::bigint AS sq_err,
              coalesce(sum(round(y.e * 1e9::float8)::bigint) FILTER (WHERE y.kind <> 'redeem'), 0)::bigint AS abs_err,
              ${bins('1')} AS bin_count, ${bins('round(y.p * 1e9::float8)::bigint')} AS bin_p, ${bins('round(y.v * 1e9::float8)::bigint')} AS bin_v
         FROM y GROUP BY y.market_id, y.agent_id
     )
     INSERT INTO participant_results (agent_id, market_id, workspace_id, metric_id, resolved_at, trades, volume, settled, forecasts, sq_err, abs_err, bin_count, bin_p, bin_v)
     SELECT p.agent_id, mk.id, mk.workspace_id, mk.metric_id, mk.resolved_at, coalesce(s.trades, 0), coalesce(s.volume, 0), coalesce(p.payout, 0) - p.net_cost,
            coalesce(s.forecasts, 0), coalesce(s.sq_err, 0), coalesce(s.abs_err, 0),
            coalesce(s.bin_count, ${zeros}), coalesce(s.bin_p, ${zeros}), coalesce(s.bin_v, ${zeros})
       FROM positions p JOIN markets mk ON mk.id = p.market_id AND mk.status = 'resolved' AND mk.resolved_value IS NOT NULL
       LEFT JOIN s ON s.market_id = p.market_id AND s.agent_id = p.agent_id
      WHERE ($1::text[] IS NULL OR p.agent_id = ANY($1))
     ON CONFLICT (agent_id, market_id) DO NOTHING`,
    [agentIds],
  );
  const sum = (c: string) => `ARRAY[${Array.from({ length: 10 }, (_, i) => `sum(r.${c}[${i + 1}])`).join(', ')}]::bigint[]`;
  await q.query(
    `INSERT INTO participant_stats (agent_id, workspace_id, metric_id, resolved_markets, trades, volume, settled, forecasts, sq_err, abs_err, bin_count, bin_p, bin_v, last_resolved_at)
     SELECT r.agent_id, r.workspace_id, r.metric_id, count(*), sum(r.trades), sum(r.volume), sum(r.settled), sum(r.forecasts), sum(r.sq_err), sum(r.abs_err),
            ${sum('bin_count')}, ${sum('bin_p')}, ${sum('bin_v')},
            max(r.resolved_at)
       FROM participant_results r
      WHERE ($1::text[] IS NULL OR r.agent_id = ANY($1))
      GROUP BY r.agent_id, r.workspace_id, r.metric_id
     ON CONFLICT (agent_id, workspace_id, metric_id) DO NOTHING`,
    [agentIds],
  );
}

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
    // Room on each page for the row's next version: the resolution's upserts stay HOT (no index entries).
    await q.query(`ALTER TABLE participant_stats SET (fillfactor = 50)`);
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
    await backfillStandings(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS benchmark_stats`);
    await q.query(`DROP TABLE IF EXISTS season_stats`);
    await q.query(`DROP TABLE IF EXISTS seasons`);
    await q.query(`DROP TABLE IF EXISTS participant_stats`);
    await q.query(`DROP TABLE IF EXISTS participant_results`);
  }
}

import type { DataSource, EntityManager } from 'typeorm';
import { firstRow } from '../../db/queryRows';
import { cachedStanding } from './boardCache';
import { readSums, sumSelect, type SummedRow } from './sums';

type Q = DataSource | EntityManager;

export const LEADERBOARD_SORTS = ['earnings', 'calibration', 'accuracy', 'volume'] as const;
export type LeaderboardSort = (typeof LEADERBOARD_SORTS)[number];
/** Resolved books a participant must have held to be ranked, unless the request says otherwise. */
export const DEFAULT_MIN_RESOLVED = 1;

export interface LeaderboardQuery {
  seasonId?: string | null;
  workspaceId?: string | null;
  metricId?: string | null;
  sort: LeaderboardSort;
  minResolvedMarkets: number;
  limit: number;
  offset: number;
  /** Metrics the public may not read (publiclyHiddenMetricIds): their books count in no figure. Part of the cache key. */
  hiddenMetricIds: readonly string[];
}

export interface LeaderboardRow extends SummedRow {
  rank: number;
  agentId: string;
  nickname: string;
  bot: boolean;
}

/**
 * The ranking key, best first: earnings and volume descending; calibration and accuracy by their
 * error sums per scored trade ascending (1 - Brier and 1 - MAE descending). Participants without a
 * scored trade sort after everyone on those two.
 */
const KEY: Record<LeaderboardSort, string> = {
  earnings: `sum(s.settled) DESC`,
  volume: `sum(s.volume) DESC`,
  calibration: `(sum(s.sq_err)::numeric / nullif(sum(s.forecasts), 0)) ASC NULLS LAST`,
  accuracy: `(sum(s.abs_err)::numeric / nullif(sum(s.forecasts), 0)) ASC NULLS LAST`,
};

/**
 * Standings over public workspaces from the aggregates (participant_stats, or a season's
 * season_stats): ranked with ties sharing a rank (1, 1, 3), ties listed by nickname then id; only
 * participants with at least minResolvedMarkets resolved books are ranked.
 */
export async function standings(q: Q, lq: LeaderboardQuery): Promise<{ total: number; rows: LeaderboardRow[] }> {
  return cachedStanding(q, `board:${JSON.stringify(lq)}`, () => computeStandings(q, lq));
}

async function computeStandings(q: Q, lq: LeaderboardQuery): Promise<{ total: number; rows: LeaderboardRow[] }> {
  const table = lq.seasonId ? 'season_stats' : 'participant_stats';
  const rows: Array<Record<string, unknown>> = await q.query(
    `WITH g AS (
       SELECT s.agent_id, ${sumSelect('s', undefined, false)}, rank() OVER (ORDER BY ${KEY[lq.sort]})::int AS rank, count(*) OVER ()::int AS total
         FROM ${table} s JOIN workspaces w ON w.id = s.workspace_id AND w.public
        WHERE ($1::uuid IS NULL OR s.workspace_id = $1) AND ($2::uuid IS NULL OR s.metric_id = $2) AND NOT (s.metric_id = ANY($6::uuid[]))
          ${lq.seasonId ? 'AND s.season_id = $7' : ''}
        GROUP BY s.agent_id
       HAVING sum(s.resolved_markets) >= $3
     )
     SELECT g.*, a.nickname, a.parent_id FROM g JOIN agents a ON a.id = g.agent_id
      ORDER BY g.rank, a.nickname, a.id
      LIMIT $4 OFFSET $5`,
    [lq.workspaceId ?? null, lq.metricId ?? null, lq.minResolvedMarkets, lq.limit, lq.offset, lq.hiddenMetricIds, ...(lq.seasonId ? [lq.seasonId] : [])],
  );
  const total = rows.length ? Number(rows[0].total) : await countRanked(q, table, lq);
  return {
    total,
    rows: rows.map((r) => ({ ...readSums(r), rank: Number(r.rank), agentId: r.agent_id as string, nickname: r.nickname as string, bot: r.parent_id !== null })),
  };
}

/** Past the last page the window count is not there: count the ranked participants directly. */
async function countRanked(q: Q, table: string, lq: LeaderboardQuery): Promise<number> {
  if (lq.offset === 0) return 0;
  // A count answers one row.
  const r = (await firstRow<{ n: number }>(
    q,
    `SELECT count(*)::int AS n FROM (
       SELECT s.agent_id FROM ${table} s JOIN workspaces w ON w.id = s.workspace_id AND w.public
        WHERE ($1::uuid IS NULL OR s.workspace_id = $1) AND ($2::uuid IS NULL OR s.metric_id = $2) AND NOT (s.metric_id = ANY($4::uuid[])) ${lq.seasonId ? 'AND s.season_id = $5' : ''}
        GROUP BY s.agent_id HAVING sum(s.resolved_markets) >= $3) x`,
    [lq.workspaceId ?? null, lq.metricId ?? null, lq.minResolvedMarkets, lq.hiddenMetricIds, ...(lq.seasonId ? [lq.seasonId] : [])],
  ))!;
  return r.n;
}

/** A participant's rank on the all-time earnings standings over public workspaces (leaving out the publicly hidden metrics); null while unranked. */
export async function earningsRank(q: Q, agentId: string, hiddenMetricIds: readonly string[], minResolvedMarkets = DEFAULT_MIN_RESOLVED): Promise<number | null> {
  const ranks = await cachedStanding(q, `ranks:${minResolvedMarkets}:${hiddenMetricIds.join(',')}`, async () => {
    const rows: Array<{ agent_id: string; rank: number }> = await q.query(
      `SELECT s.agent_id, rank() OVER (ORDER BY sum(s.settled) DESC)::int AS rank
         FROM participant_stats s JOIN workspaces w ON w.id = s.workspace_id AND w.public
        WHERE NOT (s.metric_id = ANY($2::uuid[]))
        GROUP BY s.agent_id HAVING sum(s.resolved_markets) >= $1`,
      [minResolvedMarkets, hiddenMetricIds],
    );
    return new Map(rows.map((r) => [r.agent_id, r.rank]));
  });
  return ranks.get(agentId) ?? null;
}

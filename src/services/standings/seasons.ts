import type { EntityManager } from 'typeorm';
import { inTransaction } from '../../db/tx';
import { firstRow, rows } from '../../db/queryRows';
import { rowReader, type Row } from '../../db/rows';
import { Season } from '../../entities/standings';
import type { Deps } from '../../deps';
import { RELIABILITY_BINS } from '../../domain/calibration';
import { DomainError } from '../../errors';
import { publiclyHiddenMetricIds } from '../access';
import { findWorkspace } from '../workspaces';
import { standings, type LeaderboardQuery, type LeaderboardSort } from './leaderboard';
import { BIN_COLUMNS, SUM_COLUMNS } from './sums';

/** A season (the entity's columns shown) and where it stands now. */
export type SeasonRow = Pick<Row<Season>, 'id' | 'name' | 'startsAt' | 'endsAt'> & { status: 'upcoming' | 'active' | 'ended' };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const readSeason = rowReader(Season);

function toSeason(raw: Record<string, unknown>, now: Date): SeasonRow {
  const { id, name, startsAt, endsAt } = readSeason(raw);
  return { id, name, startsAt, endsAt, status: now < startsAt ? 'upcoming' : now >= endsAt ? 'ended' : 'active' };
}

export async function listSeasons(deps: Deps): Promise<SeasonRow[]> {
  const seasons = await rows<Record<string, unknown>>(deps.ds, `SELECT id, name, starts_at, ends_at FROM seasons ORDER BY starts_at DESC, id`);
  const now = deps.clock.now();
  return seasons.map((r) => toSeason(r, now));
}

export async function seasonById(deps: Deps, id: string): Promise<SeasonRow> {
  const row = UUID_RE.test(id) ? await firstRow<Record<string, unknown>>(deps.ds, `SELECT id, name, starts_at, ends_at FROM seasons WHERE id = $1`, [id]) : undefined;
  if (!row) throw new DomainError('not_found', `No season "${id}" exists.`);
  return toSeason(row, deps.clock.now());
}

export interface StandingsRequest {
  seasonId?: string;
  workspaceId?: string;
  metricId?: string;
  sort: LeaderboardSort;
  minResolvedMarkets: number;
  limit: number;
  offset: number;
}

/** GET /leaderboard: the season and the workspace (id or slug; public only) resolved, then the standings. */
export async function standingsOf(deps: Deps, q: StandingsRequest) {
  const season = q.seasonId ? await seasonById(deps, q.seasonId) : null;
  let workspaceId: string | null = null;
  if (q.workspaceId) {
    const ws = await findWorkspace(deps.ds, q.workspaceId);
    if (!ws || !ws.public) throw new DomainError('workspace_not_found', `No public workspace "${q.workspaceId}" exists.`);
    workspaceId = ws.id;
  }
  const lq: LeaderboardQuery = { ...q, seasonId: season?.id ?? null, workspaceId, metricId: q.metricId ?? null, hiddenMetricIds: await publiclyHiddenMetricIds(deps) };
  return { season, workspaceId, metricId: lq.metricId, sort: q.sort, minResolvedMarkets: q.minResolvedMarkets, limit: q.limit, offset: q.offset, ...(await standings(deps.ds, lq)) };
}

/** A season with its standings: books resolved within [startsAt, endsAt), so frozen once it has ended. */
export async function seasonStandings(deps: Deps, id: string, q: Omit<StandingsRequest, 'seasonId'>) {
  const board = await standingsOf(deps, { ...q, seasonId: id });
  return { season: board.season!, standings: board };
}

/**
 * A season's sums again from the per-book results resolved within its period: the operator's
 * create or edit (never a read) is the one place a season reads past results. Resolutions after
 * that add to it as they happen (recordBookStandings).
 */
async function rebuild(m: EntityManager, id: string): Promise<void> {
  await m.query(`DELETE FROM season_stats WHERE season_id = $1`, [id]);
  const bins = (c: string) => `ARRAY[${Array.from({ length: RELIABILITY_BINS }, (_, i) => `sum(r.${c}[${i + 1}])`).join(', ')}]::bigint[]`;
  await m.query(
    `INSERT INTO season_stats (season_id, agent_id, workspace_id, metric_id, resolved_markets, ${SUM_COLUMNS.join(', ')}, ${BIN_COLUMNS.join(', ')}, last_resolved_at)
     SELECT se.id, r.agent_id, r.workspace_id, r.metric_id, count(*), ${SUM_COLUMNS.map((c) => `sum(r.${c})`).join(', ')}, ${BIN_COLUMNS.map(bins).join(', ')}, max(r.resolved_at)
       FROM seasons se JOIN participant_results r ON r.resolved_at >= se.starts_at AND r.resolved_at < se.ends_at
      WHERE se.id = $1
      GROUP BY se.id, r.agent_id, r.workspace_id, r.metric_id`,
    [id],
  );
}

export interface SeasonInput {
  name?: string;
  startsAt?: Date;
  endsAt?: Date;
}

function checkPeriod(startsAt: Date, endsAt: Date): void {
  if (endsAt <= startsAt) throw new DomainError('validation_failed', 'A season must end after it starts (endsAt > startsAt).');
}

export async function createSeason(deps: Deps, input: Required<SeasonInput>): Promise<SeasonRow> {
  checkPeriod(input.startsAt, input.endsAt);
  const id = await inTransaction(deps.ds, async (m) => {
    const [row] = await rows<{ id: string }>(m, `INSERT INTO seasons (name, starts_at, ends_at) VALUES ($1, $2, $3) RETURNING id`, [input.name, input.startsAt, input.endsAt]);
    await rebuild(m, row.id);
    return row.id;
  });
  return seasonById(deps, id);
}

export async function updateSeason(deps: Deps, id: string, patch: SeasonInput): Promise<SeasonRow> {
  await seasonById(deps, id);
  await inTransaction(deps.ds, async (m) => {
    const [cur] = await rows<{ name: string; starts_at: Date; ends_at: Date }>(m, `SELECT name, starts_at, ends_at FROM seasons WHERE id = $1 FOR UPDATE`, [id]);
    const startsAt = patch.startsAt ?? cur.starts_at;
    const endsAt = patch.endsAt ?? cur.ends_at;
    checkPeriod(startsAt, endsAt);
    await m.query(`UPDATE seasons SET name = $2, starts_at = $3, ends_at = $4, updated_at = now() WHERE id = $1`, [id, patch.name ?? cur.name, startsAt, endsAt]);
    if (patch.startsAt || patch.endsAt) await rebuild(m, id);
  });
  return seasonById(deps, id);
}

import type { Deps } from '../../deps';
import { rowReader, type Row } from '../../db/rows';
import { TrackRecordRow } from '../../entities/trackRecord';
import { summariseTrackRecord, type ScoredRecord, type TrackRecordSummary } from '../../domain/trackRecord';
import { DomainError } from '../../errors';
import { rows } from '../../db/queryRows';
import { proposalShownSql, unreadableMetricIds, type ReadPolicy } from '../access';

/** An entry of the record as the reader sees it at `asOf` (a reading realised later reads as pending). */
export type TrackRecordEntry = Row<TrackRecordRow> & { proposalTitle: string; metricName: string; unit: string | null };

export interface TrackRecordQuery {
  /** The reader's read policy: metrics it may not read, and proposals hidden with them, are left out of everything. */
  policy: ReadPolicy;
  metricId?: string;
  asOf: Date;
  limit: number;
  /** The last entry id of the previous page (entries go newest decision first). */
  cursor?: string;
}

export interface TrackRecord {
  workspaceId: string;
  metric: { id: string; name: string; unit: string | null } | null;
  asOf: Date;
  summary: TrackRecordSummary;
  entries: TrackRecordEntry[];
  total: number;
  nextCursor: string | null;
}

const readRow = rowReader(TrackRecordRow);
/** The most entries a CSV export carries (newest first). */
export const EXPORT_LIMIT = 10_000;

/** What a reading instant hides: a settlement after it has not happened yet. */
function asOfView<T extends Pick<Row<TrackRecordRow>, 'status' | 'settledAt'>>(r: T, asOf: Date): T {
  if (r.status === 'pending' || (r.settledAt && r.settledAt <= asOf)) return r;
  return {
    ...r,
    status: 'pending',
    settledAt: null,
    realisedValue: null,
    marketError: null,
    persistenceError: null,
    averageChangeError: null,
    directionHeld: null,
    averageChangeDirectionHeld: null,
    forecastP: null,
    outcomeV: null,
  };
}

/**
 * A workspace's track record (one metric's with metricId) as it stood at asOf: the summary over every
 * decision the reader may see, and one page of entries. Reads the stored rows only (kept by the
 * decision, resolution and void paths).
 */
export async function readTrackRecord(deps: Deps, workspaceId: string, q: TrackRecordQuery): Promise<TrackRecord> {
  const [metrics, hidden] = await Promise.all([
    rows<{ id: string; name: string; unit: string | null }>(deps.ds, `SELECT id, name, unit FROM metrics WHERE workspace_id = $1`, [workspaceId]),
    unreadableMetricIds(deps, q.policy),
  ]);
  const visible = metrics.filter((mt) => q.policy.metric(mt.id));
  // A proposal whose metrics are all hidden is hidden with them, its rows on a readable metric too.
  const shown = hidden?.length ? proposalShownSql('p', '$4::uuid[]') : '$4::uuid[] IS NULL';
  let metric: TrackRecord['metric'] = null;
  if (q.metricId !== undefined) {
    metric = visible.find((mt) => mt.id === q.metricId) ?? null;
    if (!metric) throw new DomainError('not_found', `There is no metric ${q.metricId} you may read in this workspace.`);
  }
  const ids = metric ? [metric.id] : visible.map((mt) => mt.id);
  // The summary's narrow rows and the page of entries in parallel (two statements, one wait).
  const [summaryRows, page] = await Promise.all([
    rows<Record<string, unknown>>(
      deps.ds,
      `SELECT t.decided_at, t.decision, t.status, t.settled_at, t.advice, t.range_max - t.range_min AS width, t.market_error, t.persistence_error, t.average_change_error,
              t.direction_held, t.average_change_direction_held, t.forecast_p, t.outcome_v
         FROM track_record t JOIN proposals p ON p.id = t.proposal_id
        WHERE t.workspace_id = $1 AND t.metric_id = ANY($2::uuid[]) AND t.decided_at <= $3 AND ${shown}`,
      [workspaceId, ids, q.asOf, hidden?.length ? hidden : null],
    ),
    entriesOf(deps, workspaceId, ids, q.asOf, q.limit + 1, q.cursor, hidden),
  ]);
  const scored: ScoredRecord[] = summaryRows.map((r) => {
    const row = asOfView(readRow(r), q.asOf);
    return { ...row, rangeWidth: Number(r.width) };
  });
  const more = page.length > q.limit;
  const entries = more ? page.slice(0, q.limit) : page;
  return {
    workspaceId,
    metric,
    asOf: q.asOf,
    summary: summariseTrackRecord(scored),
    entries,
    total: scored.length,
    nextCursor: more ? entries[entries.length - 1].id : null,
  };
}

async function entriesOf(deps: Deps, workspaceId: string, metricIds: string[], asOf: Date, limit: number, cursor: string | undefined, hidden: string[] | null): Promise<TrackRecordEntry[]> {
  const shown = hidden?.length ? proposalShownSql('p', '$6::uuid[]') : '$6::uuid[] IS NULL';
  const found = await rows<Record<string, unknown>>(
    deps.ds,
    `SELECT t.*, p.title AS proposal_title, mt.name AS metric_name, mt.unit
       FROM track_record t JOIN proposals p ON p.id = t.proposal_id JOIN metrics mt ON mt.id = t.metric_id
      WHERE t.workspace_id = $1 AND t.metric_id = ANY($2::uuid[]) AND t.decided_at <= $3 AND ($4::bigint IS NULL OR t.id < $4::bigint) AND ${shown}
      ORDER BY t.id DESC LIMIT $5`,
    [workspaceId, metricIds, asOf, cursor ?? null, limit, hidden?.length ? hidden : null],
  );
  return found.map((r) => ({ ...asOfView(readRow(r), asOf), proposalTitle: r.proposal_title as string, metricName: r.metric_name as string, unit: (r.unit as string | null) ?? null }));
}

/** Every entry for the CSV export (newest first, at most EXPORT_LIMIT), narrowed and dated as readTrackRecord's. */
export async function exportTrackRecord(deps: Deps, workspaceId: string, q: Omit<TrackRecordQuery, 'limit' | 'cursor'>): Promise<TrackRecordEntry[]> {
  const r = await readTrackRecord(deps, workspaceId, { ...q, limit: EXPORT_LIMIT });
  return r.entries;
}

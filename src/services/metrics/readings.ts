import type { DataSource, EntityManager } from 'typeorm';
import { rowReader, type Row } from '../../db/rows';
import type { Clock } from '../../deps';
import { periodContaining } from '../../domain/horizons';
import { MetricReading } from '../../entities/metric';
import { badRequest } from '../../errors';

type Db = EntityManager | DataSource;

export type ResetPeriod = 'hour' | 'day' | 'week' | 'month' | 'year';
export const RESET_PERIODS: readonly ResetPeriod[] = ['hour', 'day', 'week', 'month', 'year'];

export const MAX_BACKFILL = 2000;

/** A reading as stored: its entity's columns (db/rows). */
export type ReadingRow = Row<MetricReading>;

export interface NewReading {
  metricId: string;
  /** null (or na) means the number does not exist for that moment: not a zero. */
  value: number | null;
  na?: boolean;
  asOf?: Date;
  kind: string;
  note?: string | null;
}

const rowToReading = rowReader(MetricReading);

/**
 * Insert readings in one statement (a fan-out recalculation files hundreds at once). A reading
 * with a number also marks its metric measured, which never reverts (resolvesNaUntilMeasured), and
 * moves its newest measured instant (last_measured_at) forward.
 */
export async function insertReadings(m: Db, workspaceId: string, rows: NewReading[], at: Date): Promise<ReadingRow[]> {
  if (!rows.length) return [];
  const na = rows.map((r) => r.na === true || r.value === null);
  const inserted: Record<string, unknown>[] = await m.query(
    `INSERT INTO metric_readings (metric_id, workspace_id, at, as_of, value, na, kind, note)
     SELECT x.metric_id, $1, $2, x.as_of, x.value, x.na, x.kind, x.note
       FROM unnest($3::uuid[], $4::timestamptz[], $5::float8[], $6::bool[], $7::text[], $8::text[]) AS x(metric_id, as_of, value, na, kind, note)
     RETURNING *`,
    [
      workspaceId,
      at,
      rows.map((r) => r.metricId),
      rows.map((r) => r.asOf ?? at),
      rows.map((r, i) => (na[i] ? null : r.value)),
      na,
      rows.map((r) => r.kind),
      rows.map((r) => r.note ?? null),
    ],
  );
  // Per metric: the earliest and the newest asOf among the numeric readings filed here.
  const span = new Map<string, { first: Date; last: Date }>();
  rows.forEach((r, i) => {
    if (na[i]) return;
    const asOf = r.asOf ?? at;
    const prev = span.get(r.metricId);
    if (!prev) span.set(r.metricId, { first: asOf, last: asOf });
    else span.set(r.metricId, { first: asOf < prev.first ? asOf : prev.first, last: asOf > prev.last ? asOf : prev.last });
  });
  if (span.size) {
    await m.query(
      `UPDATE metrics SET measured_at = LEAST(metrics.measured_at, x.first), last_measured_at = GREATEST(metrics.last_measured_at, x.last)
         FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS x(id, first, last)
        WHERE metrics.id = x.id AND (metrics.measured_at IS NULL OR metrics.measured_at > x.first OR metrics.last_measured_at IS NULL OR metrics.last_measured_at < x.last)`,
      [[...span.keys()], [...span.values()].map((s) => s.first), [...span.values()].map((s) => s.last)],
    );
  }
  return inserted.map(rowToReading);
}

/**
 * File one reading for a metric (used by updates here and by market settlement). It checks
 * nothing about asOf: callers apply their own bound (never in the future; settle allows +1 min).
 */
export async function fileReading(
  m: EntityManager,
  metricId: string,
  workspaceId: string,
  r: { value: number | null; na?: boolean; asOf?: Date; kind: string; note?: string },
  clock: Clock,
): Promise<ReadingRow> {
  const [row] = await insertReadings(m, workspaceId, [{ metricId, ...r }], clock.now());
  return row;
}

/** Newest first by asOf, keyset-paginated: the cursor is the last row's (asOf, id). */
export async function listReadings(
  m: Db,
  metricId: string,
  opts: { limit: number; cursor?: string },
): Promise<{ logs: ReadingRow[]; nextCursor: string | null }> {
  const after = opts.cursor ? decodeCursor(opts.cursor) : null;
  const rows: Record<string, unknown>[] = await m.query(
    `SELECT * FROM metric_readings
      WHERE metric_id = $1 AND ($2::timestamptz IS NULL OR (as_of, id) < ($2::timestamptz, $3::bigint))
      ORDER BY as_of DESC, id DESC LIMIT $4`,
    [metricId, after?.asOf ?? null, after?.id ?? '0', opts.limit + 1],
  );
  const logs = rows.slice(0, opts.limit).map(rowToReading);
  const last = logs[logs.length - 1];
  const nextCursor = rows.length > opts.limit && last ? Buffer.from(`${last.asOf.toISOString()}|${last.id}`).toString('base64url') : null;
  return { logs, nextCursor };
}

function decodeCursor(cursor: string): { asOf: Date; id: string } {
  const [iso, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const asOf = new Date(iso ?? '');
  if (!id || !/^\d{1,19}$/.test(id) || Number.isNaN(asOf.getTime())) {
    throw badRequest('The query field "cursor" is refused: pass the nextCursor of a previous page unchanged.');
  }
  return { asOf, id };
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

/** ISO 8601 date or date-time with a zone (a bare date is midnight UTC); null when unparseable. */
export function parseInstant(text: string): Date | null {
  if (!ISO_INSTANT.test(text.trim())) return null;
  const d = new Date(text.trim());
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * Spec §4.4 backfill rules: every instant parseable, not in the future, unique, and strictly older
 * than the oldest reading already logged. Throws a 400 naming the first bad entry.
 */
export async function backfillReadings(
  m: EntityManager,
  metric: { id: string; workspaceId: string },
  readings: Array<{ at: string; value: number }>,
  clock: Clock,
): Promise<{ written: number; oldest: string | null; newest: string | null }> {
  if (readings.length === 0) throw badRequest('Send at least one reading in readings.');
  if (readings.length > MAX_BACKFILL) throw badRequest(`A backfill takes at most ${MAX_BACKFILL} readings; this one has ${readings.length}.`);
  const now = clock.now();
  const seen = new Map<number, number>();
  const parsed = readings.map((r, i) => {
    const at = parseInstant(r.at);
    if (!at) throw badRequest(`readings[${i}].at "${r.at}" is not an ISO 8601 instant such as 2025-01-31T00:00:00Z.`, { index: i });
    if (!Number.isFinite(r.value)) throw badRequest(`readings[${i}].value must be a finite number.`, { index: i });
    if (at > now) throw badRequest(`readings[${i}].at ${at.toISOString()} is in the future.`, { index: i });
    const dup = seen.get(at.getTime());
    if (dup !== undefined) throw badRequest(`readings[${i}] and readings[${dup}] describe the same instant ${at.toISOString()}.`, { index: i });
    seen.set(at.getTime(), i);
    return { at, value: r.value, index: i };
  });
  const [{ oldest }]: Array<{ oldest: Date | null }> = await m.query(`SELECT min(as_of) AS oldest FROM metric_readings WHERE metric_id = $1`, [metric.id]);
  if (oldest) {
    const late = parsed.find((p) => p.at >= oldest);
    if (late) {
      throw badRequest(`readings[${late.index}].at ${late.at.toISOString()} is not older than the oldest reading (${oldest.toISOString()}); a backfill only adds history before it.`, {
        index: late.index,
        oldestReading: oldest.toISOString(),
      });
    }
  }
  parsed.sort((a, b) => a.at.getTime() - b.at.getTime());
  await insertReadings(
    m,
    metric.workspaceId,
    parsed.map((p) => ({ metricId: metric.id, value: p.value, asOf: p.at, kind: 'backfill' })),
    now,
  );
  return { written: parsed.length, oldest: parsed[0].at.toISOString(), newest: parsed[parsed.length - 1].at.toISOString() };
}

export async function purgeReadings(m: EntityManager, workspaceId: string, metricId: string | null): Promise<number> {
  const res: [unknown[], number] = await m.query(
    `DELETE FROM metric_readings WHERE workspace_id = $1 AND ($2::uuid IS NULL OR metric_id = $2::uuid)`,
    [workspaceId, metricId],
  );
  return res[1];
}

/**
 * The last `limit` numeric readings per metric, oldest first, as [unixSeconds, value]. A metric
 * that resets every period charts only the readings of the period containing `now`.
 */
export async function trendsFor(
  m: Db,
  workspaceId: string,
  limit: number,
  now: Date,
): Promise<Map<string, Array<[number, number]>>> {
  const starts = RESET_PERIODS.map((p) => periodContaining(now, p).start);
  const rows: Array<{ metric_id: string; ts: string; value: number }> = await m.query(
    `SELECT mt.id AS metric_id, extract(epoch FROM r.as_of)::float8 AS ts, r.value
       FROM metrics mt
       CROSS JOIN LATERAL (
         SELECT id, as_of, value FROM metric_readings r
          WHERE r.metric_id = mt.id AND r.value IS NOT NULL AND NOT r.na
            AND r.as_of >= CASE mt.resets_every WHEN 'hour' THEN $3 WHEN 'day' THEN $4 WHEN 'week' THEN $5
                                                WHEN 'month' THEN $6 WHEN 'year' THEN $7 ELSE '-infinity'::timestamptz END
          ORDER BY as_of DESC, id DESC LIMIT $2) r
      WHERE mt.workspace_id = $1
      ORDER BY mt.id, r.as_of ASC, r.id ASC`,
    [workspaceId, limit, ...starts],
  );
  const out = new Map<string, Array<[number, number]>>();
  for (const r of rows) {
    let list = out.get(r.metric_id);
    if (!list) out.set(r.metric_id, (list = []));
    list.push([Math.floor(Number(r.ts)), Number(r.value)]);
  }
  return out;
}

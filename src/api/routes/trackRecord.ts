import { z } from 'zod';
import { DomainError } from '../../errors';
import { policies } from '../../services/access';
import { parseInstant } from '../../services/metrics';
import { exportTrackRecord, EXPORT_LIMIT, readTrackRecord } from '../../services/trackRecord';
import { presentTrackRecord, presentTrackRecordCsv } from '../presenters/trackRecord';
import { defineRoute, type Call } from '../registry';
import { limitQuery } from '../schemas/common';
import { trackRecordSchema } from '../schemas/trackRecord';

const INSTANT_HINT = 'must be an ISO 8601 instant such as 2026-01-31T12:00:00Z';
const recordQuery = z.object({
  metricId: z.uuid('must be a metric id (a UUID)').optional(),
  asOf: z
    .string({ error: INSTANT_HINT })
    .transform((s, ctx) => parseInstant(s) ?? (ctx.addIssue({ code: 'custom', message: INSTANT_HINT }), z.NEVER))
    .optional(),
});
type RecordQuery = z.infer<typeof recordQuery>;

/** The reading instant: now by default, never ahead of it (a record of the future is not known). */
function asOfOf(c: Call<unknown, RecordQuery, unknown>): Date {
  const now = c.deps.clock.now();
  if (!c.query.asOf) return now;
  if (c.query.asOf.getTime() > now.getTime()) throw new DomainError('validation_failed', 'The query field "asOf" is refused: it must not be in the future.');
  return c.query.asOf;
}

export const getTrackRecord = defineRoute({
  method: 'GET',
  path: '/track-record',
  response: trackRecordSchema,
  errors: ['not_found'],
  auth: policies.trackRecord.list,
  summary:
    "The workspace's track record (one metric's with metricId): for every decided proposal, metric and target date, both branches' consensus at the decision, what was decided, the decided branch's realised reading, the forecast error and whether the predicted direction held; beside the market, the same error for persistence, the average change and always approve; hit rate, error and calibration by month (or by 5 decisions while few); definitions explain each figure. Only the decided branch is ever realised. Query asOf (the record as it stood then; default now), limit (entries per page, default 50, max 200), cursor (nextCursor of the previous page). Metrics the caller may not read are left out of everything.",
  query: recordQuery.extend({ limit: limitQuery(50, 200), cursor: z.string().regex(/^[0-9]{1,18}$/, 'must be the nextCursor of a previous page').optional() }),
  handler: async (c) => {
    const access = c.workspace();
    const r = await readTrackRecord(c.deps, access.workspace.id, { policy: access.policy, metricId: c.query.metricId, asOf: asOfOf(c), limit: c.query.limit, cursor: c.query.cursor });
    return presentTrackRecord(r);
  },
});

export const getTrackRecordCsv = defineRoute({
  method: 'GET',
  path: '/track-record/csv',
  response: z.string(),
  responseType: 'text/csv',
  errors: ['not_found'],
  auth: policies.trackRecord.readCsv,
  summary: `The track record's entries as CSV (RFC 4180, a header row, newest decision first, at most ${EXPORT_LIMIT}), the same rows and figures as GET /track-record. Query metricId, asOf.`,
  query: recordQuery,
  handler: async (c) => {
    const access = c.workspace();
    const entries = await exportTrackRecord(c.deps, access.workspace.id, { policy: access.policy, metricId: c.query.metricId, asOf: asOfOf(c) });
    c.koa.type = 'text/csv; charset=utf-8';
    c.koa.set('Content-Disposition', `attachment; filename="track-record-${access.workspace.slug}.csv"`);
    return presentTrackRecordCsv(entries);
  },
});

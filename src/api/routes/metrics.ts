import { z } from 'zod';
import { validateTimePreference } from '../../domain/horizons';
import { policies } from '../../services/access';
import { DomainError } from '../../errors';
import {
  addMetric,
  backfillMetricHistory,
  editMetric,
  MAX_SETTLEMENT_LAG_MINUTES,
  metricInWorkspace,
  metricsOfWorkspace,
  metricUpdates,
  purgeReadingLogs,
  readingLogOf,
  removeMetric,
  reorderWorkspaceMetrics,
  repairLeafTypes,
} from '../../services/metrics';
import { MAX_BACKFILL, parseInstant, RESET_PERIODS } from '../../services/metrics';
import { presentMetric, presentReading, presentUpdate } from '../presenters/metric';
import { backfillSchema, metricSchema, purgeSchema, readingPageSchema, updatedSchema, updateSchema } from '../schemas/metrics';
import { openingCost, openingQuote } from '../schemas/funding';
import { presentOpeningCost } from '../presenters/funding';
import { defineRoute, type Call } from '../registry';
import { idempotencyKey } from '../idempotency';
import { credits, idParam, limitQuery } from '../schemas/common';

const finite = z.number({ error: 'must be a finite number' });
const metricName = z
  .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
  .trim()
  .min(1, 'must not be blank')
  .max(120, 'must be at most 120 characters')
  .refine((s) => !/[{}]/.test(s), 'must not contain { or } (formulas put them around metric names)');
const instant = z.string({ error: 'must be an ISO 8601 instant such as 2025-01-31T12:00:00Z' }).transform((s, ctx) => {
  const d = parseInstant(s);
  if (!d) ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 instant such as 2025-01-31T12:00:00Z' });
  return d ?? z.NEVER;
});
const timePreference = z
  .unknown()
  .transform((v, ctx) => {
    if (v === null) return null;
    const r = validateTimePreference(v);
    if (!r.ok) {
      ctx.addIssue({ code: 'custom', message: r.error.replace(/\.$/, '') });
      return z.NEVER;
    }
    return r.value;
  })
  .optional();

// Settings of spec §2.2 accepted on create and update.
const settings = {
  description: z.string({ error: 'must be a string' }).max(5000, 'must be at most 5000 characters').optional(),
  formula: z.string({ error: 'must be a string' }).max(5000, 'must be at most 5000 characters').optional(),
  marketRangeMax: finite.gt(0, 'must be greater than 0').optional(),
  resetsEvery: z.enum(RESET_PERIODS, { error: `must be null or one of ${RESET_PERIODS.join(', ')}` }).nullable().optional(),
  opensAt: finite.nullable().optional(),
  resolvesNaUntilMeasured: z.boolean({ error: 'must be true or false' }).optional(),
  timePreference,
  unit: z.string({ error: 'must be a string or null' }).trim().max(32, 'must be at most 32 characters').nullable().optional().describe('What the numbers count ("k€", "users"); blank or null: none.'),
};
const UPDATE_ONLY = ['liquidityCredits', 'marketTitle', 'settlementLagMinutes', 'oldValue', 'updateNote', 'na', 'asOf'] as const;

/** At creation the subsidy per book comes from timePreference.horizonCredits or the workspace default. */
const LIQUIDITY_AT_CREATE =
  'can be set on update only (PUT /metrics/{id}); at creation set the subsidy per book with timePreference.horizonCredits ({ "<horizon>": { "book": credits } }), or change the workspace\'s defaultLiquidityCredits (PATCH /workspaces/{id}); POST /metrics?dryRun=true shows what the books would cost';

/** A field PUT takes and POST does not: named in the create body so its refusal says where it belongs. */
const updateOnly = (key: (typeof UPDATE_ONLY)[number]) =>
  z
    .unknown()
    .superRefine((_v, ctx) => ctx.addIssue({ code: 'custom', message: key === 'liquidityCredits' ? LIQUIDITY_AT_CREATE : 'can be set on update only (PUT /metrics/{id})' }))
    .optional()
    .describe('Refused here: set it with PUT /metrics/{id}.');

const createBody = z.object({
  name: metricName,
  value: finite.optional(),
  ...settings,
  dryRun: z.boolean({ error: 'must be true or false' }).optional(),
  ...Object.fromEntries(UPDATE_ONLY.map((k) => [k, updateOnly(k)])),
});
const dryRunQuery = z.object({ dryRun: z.enum(['true', 'false'], { error: 'must be true or false' }).optional() });

const updateBody = z.object({
  name: metricName.optional(),
  value: finite.nullable().optional(),
  ...settings,
  na: z.boolean({ error: 'must be true or false' }).optional(),
  asOf: instant.optional(),
  liquidityCredits: credits.nullable().optional(),
  marketTitle: z.string({ error: 'must be a string or null' }).max(200, 'must be at most 200 characters').nullable().optional(),
  settlementLagMinutes: z
    .number({ error: 'must be a whole number of minutes' })
    .int('must be a whole number of minutes')
    .min(0, 'must not be negative')
    .max(MAX_SETTLEMENT_LAG_MINUTES, `must be at most ${MAX_SETTLEMENT_LAG_MINUTES} (90 days in minutes)`)
    .nullable()
    .optional(),
  oldValue: finite.optional(),
  updateNote: z.string({ error: 'must be a string' }).max(2000, 'must be at most 2000 characters').optional(),
});

const createdMetricSchema = metricSchema.extend(openingCost).meta({ id: 'CreatedMetric' });
const metricQuoteSchema = z
  .object({
    ...openingQuote,
    metric: metricSchema
      .extend({ id: z.null().describe('A preview has no id: nothing was created.'), preview: z.literal(true) })
      .describe('A preview of the metric as it would be created (nothing was written).'),
  })
  .meta({ id: 'MetricQuote' });

const actorId = (c: Call<unknown, unknown, unknown>): string | null => c.caller?.agentId ?? null;

export const getMetrics = defineRoute({
  method: 'GET',
  path: '/metrics',
  response: z.array(metricSchema),
  errors: [],
  auth: policies.metrics.list,
  summary: 'Metrics with computed totals and depth, sorted by depth then order.',
  handler: async (c) => (await metricsOfWorkspace(c.deps, c.workspace().workspace.id)).filter((r) => c.workspace().metricReadable(r.id)).map(presentMetric),
});

export const postMetrics = defineRoute({
  method: 'POST',
  path: '/metrics',
  idempotent: true,
  response: createdMetricSchema,
  dryRunResponse: metricQuoteSchema,
  successStatus: 201,
  errors: ['formula_invalid', 'formula_cycle', 'conflict', 'idempotency_key_reuse'],
  auth: policies.metrics.create,
  summary:
    "Create a metric: { name, description?, value?, formula? ({Name} references, + - * /, sqrt abs min max pow), marketRangeMax?, resetsEvery?, opensAt?, resolvesNaUntilMeasured?, timePreference?, unit? }. Its books open paid by the workspace owner: the 201 carries subsidySpent, books (cost per book) and unfundedBooks (which stayed unfunded and why). dryRun (query ?dryRun=true or body dryRun: true) answers 200 with what it would cost and whether the owner's balance covers it, and writes nothing. Idempotency-Key header (the books are paid for): a retry with the key answers the first outcome.",
  body: createBody,
  query: dryRunQuery,
  handler: async (c) => {
    const ws = c.workspace().workspace;
    const { dryRun: bodyDryRun, ...input } = c.body;
    const dryRun = bodyDryRun === true || c.query.dryRun === 'true';
    const r = await addMetric(c.deps, ws.id, input, actorId(c), { dryRun, idempotencyKey: idempotencyKey(c) });
    if (dryRun) {
      c.status(200);
      return { ...presentOpeningCost(r, { planned: r.planned, payerId: r.ownerId, balance: r.balanceBefore }), metric: { ...presentMetric(r.metric), id: null, preview: true as const } };
    }
    c.status(201);
    return { ...presentMetric(r.metric), ...presentOpeningCost(r) };
  },
});

export const postMetricsReorder = defineRoute({
  method: 'POST',
  path: '/metrics/reorder',
  response: updatedSchema,
  errors: [],
  auth: policies.metrics.reorder,
  summary: 'Body { ids: [string] }: order is 1-based by index; ids outside the workspace are ignored. Returns { updated }.',
  body: z.object({ ids: z.array(z.string({ error: 'must hold metric ids' }).max(200), { error: 'must be a list of metric ids' }).max(10_000, 'must hold at most 10000 ids') }),
  handler: async (c) => ({ updated: await reorderWorkspaceMetrics(c.deps, c.workspace().workspace.id, c.body.ids) }),
});

export const postMetricsMigrateLeafTypes = defineRoute({
  method: 'POST',
  path: '/metrics/migrate-leaf-types',
  response: updatedSchema,
  errors: [],
  auth: policies.metrics.migrateLeafTypes,
  summary: 'Idempotent repair of leaf versus computed typing (and depths) from the stored formulas. Returns { updated }.',
  handler: async (c) => ({ updated: await repairLeafTypes(c.deps, c.workspace().workspace.id) }),
});

export const postMetricsLogsPurge = defineRoute({
  method: 'POST',
  path: '/metrics/logs/purge',
  response: purgeSchema,
  errors: ['not_found'],
  auth: policies.metrics.purgeLogs,
  summary: 'Body { metricId? }: delete the readings of one metric, or of every metric in the workspace. Returns { deleted, scope }.',
  body: z.object({ metricId: z.string({ error: 'must be a metric id' }).min(1).max(200).optional() }),
  handler: async (c) => purgeReadingLogs(c.deps, c.workspace().workspace.id, c.body.metricId ?? null),
});

export const getMetricsById = defineRoute({
  method: 'GET',
  path: '/metrics/:id',
  response: metricSchema,
  errors: ['not_found'],
  auth: policies.metrics.read,
  summary: 'One metric, by id or by name. 404 if unknown.',
  params: idParam,
  handler: async (c) => {
    const row = await metricInWorkspace(c.deps, c.workspace().workspace.id, c.params.id);
    if (!row || !c.workspace().metricReadable(row.id)) throw new DomainError('not_found', `No metric "${c.params.id}" exists in this workspace.`);
    return presentMetric(row);
  },
});

export const putMetricsById = defineRoute({
  method: 'PUT',
  path: '/metrics/:id',
  response: metricSchema,
  errors: ['not_found', 'formula_invalid', 'formula_cycle', 'conflict'],
  auth: policies.metrics.set,
  summary:
    'Update a metric (spec §2.2). value files a reading (asOf?, never in the future) and recalculates dependants; na: true or value: null files an N/A reading. Update only: liquidityCredits, marketTitle, settlementLagMinutes, oldValue, updateNote.',
  params: idParam,
  body: updateBody,
  handler: async (c) => {
    const ws = c.workspace().workspace;
    return presentMetric(await editMetric(c.deps, ws.id, c.params.id, c.body, actorId(c)));
  },
});

export const deleteMetricsById = defineRoute({
  method: 'DELETE',
  path: '/metrics/:id',
  errors: ['not_found', 'conflict'],
  auth: policies.metrics.remove,
  summary: "Delete a metric: 204. 409 while another metric's formula references it, or while an open market on it has trades.",
  params: idParam,
  handler: async (c) => {
    await removeMetric(c.deps, c.workspace().workspace.id, c.params.id);
  },
});

export const getMetricsByIdLogs = defineRoute({
  method: 'GET',
  path: '/metrics/:id/logs',
  response: readingPageSchema,
  errors: ['not_found'],
  auth: policies.metrics.readLogs,
  summary: 'Readings, newest first by asOf: { metricId, logs: [{ id, at, asOf, value, na, kind, note }], nextCursor }. Query limit (default 100, max 1000), cursor.',
  params: idParam,
  query: z.object({ limit: limitQuery(100, 1000), cursor: z.string().max(200, 'is not a cursor this service issued').optional() }),
  handler: async (c) => {
    const page = await readingLogOf(c.deps, c.workspace().workspace.id, c.params.id, c.query);
    if (!page) throw new DomainError('not_found', `No metric "${c.params.id}" exists in this workspace.`);
    return { metricId: page.metricId, logs: page.logs.map(presentReading), nextCursor: page.nextCursor };
  },
});

export const postMetricsByIdLogsBackfill = defineRoute({
  method: 'POST',
  path: '/metrics/:id/logs/backfill',
  response: backfillSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.metrics.backfillLogs,
  summary: `Body { readings: [{ at, value }] }, at most ${MAX_BACKFILL}, unique instants, all strictly older than the oldest reading. The current value does not move. Returns { written, oldest, newest }.`,
  params: idParam,
  body: z.object({
    readings: z
      .array(
        z.object({
          at: z.string({ error: 'must be an ISO 8601 instant such as 2025-01-31T00:00:00Z' }),
          value: finite,
        }),
        { error: 'must be a list of { at, value }' },
      )
      .max(MAX_BACKFILL, `must hold at most ${MAX_BACKFILL} readings`),
  }),
  handler: async (c) => backfillMetricHistory(c.deps, c.workspace().workspace.id, c.params.id, c.body.readings),
});

export const getUpdates = defineRoute({
  method: 'GET',
  path: '/updates',
  response: z.array(updateSchema),
  errors: [],
  auth: policies.metrics.readUpdates,
  summary: 'Value-change history of the workspace metrics, newest first. Query limit (default 50, max 500).',
  query: z.object({ limit: limitQuery(50, 500) }),
  handler: async (c) => (await metricUpdates(c.deps, c.workspace().workspace.id, c.query.limit)).map(presentUpdate),
});

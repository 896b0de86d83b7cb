import { z } from 'zod';
import { marketSummarySchema } from './markets';
import { count, creditAmount, instant, nullableInstant } from './output';

const horizonCredit = z.object({ book: z.number().nullable().optional(), proposal: z.number().optional() });
export const timePreferenceSchema = z.object({
  enabled: z.boolean(),
  halfLife: z.number().optional(),
  density: z.number().optional(),
  customHorizons: z.array(z.string()).optional(),
  horizonCredits: z.record(z.string(), horizonCredit).optional(),
  horizonTitles: z.record(z.string(), z.string()).optional(),
});

/** presentMetric (presenters/metric.ts). */
export const metricSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    value: z.number().nullable(),
    total: z.number().nullable(),
    currentValue: z.number().nullable().describe('Same as total (condensed name).'),
    targetValue: z.null(),
    unit: z.string().nullable().describe('What the numbers count ("k€", "users"); null when unnamed.'),
    formula: z.string(),
    formulaError: z.string().nullable(),
    depth: count,
    order: z.number().int(),
    isLeaf: z.boolean(),
    marketRangeMax: z.number(),
    resetsEvery: z.string().nullable(),
    opensAt: z.number().nullable(),
    resolvesNaUntilMeasured: z.boolean(),
    measuredAt: nullableInstant.describe('When the newest numeric reading was dated (its asOf): when the value was last measured.'),
    firstMeasuredAt: nullableInstant.describe('When the earliest numeric reading was dated: it ends resolvesNaUntilMeasured for good. Purges clear neither.'),
    timePreference: timePreferenceSchema.nullable(),
    liquidityCredits: creditAmount.nullable(),
    marketTitle: z.string().nullable(),
    settlementLagMinutes: z.number().int().nullable(),
    createdAt: instant,
    updatedAt: instant,
  })
  .meta({ id: 'Metric' });

export const readingSchema = z.object({
  id: z.string(),
  at: instant,
  asOf: instant,
  value: z.number().nullable(),
  na: z.boolean(),
  kind: z.string(),
  note: z.string().nullable(),
});

export const readingPageSchema = z.object({ metricId: z.string(), logs: z.array(readingSchema), nextCursor: z.string().nullable() });

export const updateSchema = z.object({
  id: z.string(),
  metricId: z.string(),
  metricName: z.string(),
  oldValue: z.number().nullable(),
  newValue: z.number().nullable(),
  na: z.boolean(),
  asOf: instant,
  note: z.string().nullable(),
  updatedBy: z.string().nullable(),
  createdAt: instant,
});

export const statusSchema = z.object({
  ok: z.boolean(),
  creditValueUsd: z.number(),
  workspace: z.object({ id: z.string(), slug: z.string(), name: z.string(), description: z.string() }),
  metrics: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      description: z.string(),
      value: z.number().nullable(),
      total: z.number().nullable(),
      currentValue: z.number().nullable(),
      depth: count,
      order: z.number().int(),
      formulaError: z.string().nullable(),
      measuredAt: nullableInstant.describe('When the newest numeric reading was dated (its asOf).'),
      trend: z.array(z.tuple([z.number(), z.number()])).optional().describe('[unix seconds, value] pairs with trends=1.'),
      markets: z.array(marketSummarySchema).optional().describe('Open baseline books with markets=1.'),
    }),
  ),
});

export const updatedSchema = z.object({ updated: count });
export const purgeSchema = z.object({ deleted: count, scope: z.enum(['metric', 'workspace']), metricId: z.string().optional() });
export const backfillSchema = z.object({ written: count, oldest: nullableInstant, newest: nullableInstant });
export const settleSchema = z.object({ metricId: z.string(), settled: z.array(z.string()), count, totalPayout: creditAmount, pending: count });
export const refreshSchema = z.object({ ok: z.boolean(), metrics: count, opened: count, deactivated: count, voided: count, proposalBranches: count });
export const resolveSchema = z.object({
  ok: z.boolean(),
  checked: count,
  resolved: z.array(z.string()),
  voided: z.array(z.string()),
  waiting: z.array(z.string()),
  skipped: z.array(z.string()),
  pending: z.array(z.string()),
});

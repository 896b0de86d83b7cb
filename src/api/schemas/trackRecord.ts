import { z } from 'zod';
import { branch, count, instant, nullableInstant } from './output';

const fraction = z.number().nullable();
const rate = z.object({ hits: count, scored: count, rate: fraction });

export const trackRecordEntrySchema = z.object({
  proposalId: z.string(),
  proposalTitle: z.string(),
  metricId: z.string(),
  metricName: z.string(),
  unit: z.string().nullable(),
  targetDate: z.string(),
  marketId: z.string().describe('The decided branch\'s book: the only one that can realise.'),
  decision: branch,
  decidedAt: instant,
  approvedConsensus: z.number().nullable(),
  declinedConsensus: z.number().nullable(),
  advice: branch.nullable().describe('The branch with the higher consensus at the decision (null without both, or on a tie).'),
  followedAdvice: z.boolean().nullable(),
  forecast: z.number().nullable().describe('The decided branch\'s consensus at the decision.'),
  unchosen: z.object({ branch, consensus: z.number().nullable(), realised: z.null().describe('Never observed: only the decided branch is realised.') }),
  lastReading: z.number().nullable(),
  averageChange: z.number().nullable(),
  status: z.enum(['pending', 'realised', 'voided']),
  realisedValue: z.number().nullable(),
  settledAt: nullableInstant,
  error: z.number().nullable().describe('Realised minus forecast, both clamped into the book\'s range.'),
  relativeError: fraction,
  persistenceError: z.number().nullable(),
  averageChangeError: z.number().nullable(),
  directionHeld: z.boolean().nullable(),
});

const rule = z.object({
  rule: z.enum(['persistence', 'averageChange', 'alwaysApprove']),
  decisions: count,
  meanError: fraction,
  marketMeanError: fraction,
  marketBetterBy: z.number().nullable(),
  marketCloser: count,
  hitRate: rate.nullable(),
  unobservable: count,
});

const advice = z.object({ decisions: count, realised: count, hitRate: rate, meanError: fraction });

export const trackRecordSchema = z.object({
  workspaceId: z.string(),
  metric: z.object({ id: z.string(), name: z.string(), unit: z.string().nullable() }).nullable(),
  asOf: instant,
  definitions: z.record(z.string(), z.string()),
  summary: z.object({
    decisions: count,
    realised: count,
    pending: count,
    voided: count,
    market: z.object({ decisions: count, meanError: fraction, hitRate: rate }),
    rules: z.array(rule),
    advice: z.object({ followed: advice, against: advice, none: count }),
  }),
  periodKind: z.enum(['month', 'decisions']),
  periods: z.array(
    z.object({
      label: z.string(),
      from: instant,
      to: instant,
      decisions: count,
      realised: count,
      hitRate: rate,
      marketError: fraction,
      persistenceError: fraction,
      averageChangeError: fraction,
      calibration: fraction,
      toDate: z.object({ hitRate: rate, marketError: fraction }),
    }),
  ),
  calibration: z.object({
    forecasts: count,
    score: fraction,
    bins: z.array(z.object({ bin: count, forecasts: count, meanForecast: fraction, meanOutcome: fraction })),
  }),
  entries: z.array(trackRecordEntrySchema),
  total: count,
  nextCursor: z.string().nullable(),
});

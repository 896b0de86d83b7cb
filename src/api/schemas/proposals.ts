import { z } from 'zod';
import { marketSchema, marketStatus } from './markets';
import { branch, count, creditAmount, instant, nullableInstant } from './output';

const branchImpact = z
  .object({
    marketId: z.string(),
    status: marketStatus,
    consensus: z.number().nullable(),
    probability: z.number().nullable(),
    liquidity: creditAmount,
    tradeCount: count,
  })
  .nullable();

export const scorecardRowSchema = z.object({
  proposalId: z.string(),
  proposalTitle: z.string(),
  marketId: z.string(),
  metricId: z.string(),
  metricName: z.string(),
  targetDate: z.string(),
  branch,
  decision: z.enum(['pending', 'approved', 'declined', 'withdrawn']),
  taken: z.boolean().nullable(),
  realisedValue: z.number(),
  rangeMin: z.number(),
  rangeMax: z.number(),
  approvedConsensus: z.number().nullable(),
  declinedConsensus: z.number().nullable(),
  predicted: z.number().nullable(),
  error: z.number().nullable(),
  absoluteError: z.number().nullable(),
  relativeError: z.number().nullable(),
  withinRange: z.boolean().nullable(),
  closerThanOther: z.boolean().nullable(),
  resolvedAt: instant,
});

/** presentProposal (presenters/proposal.ts). */
export const proposalSchema = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    title: z.string(),
    description: z.string(),
    status: z.enum(['pending', 'approved', 'declined', 'withdrawn']),
    spam: z.boolean(),
    proposedBy: z.string().nullable(),
    proposedByNickname: z.string().nullable(),
    createdAt: instant,
    deadline: nullableInstant,
    deadlinePassed: z.boolean(),
    closed: z.boolean(),
    decidedBy: z.string().nullable(),
    decidedAt: nullableInstant,
    liquiditySubsidy: creditAmount,
    conditionalMarketCount: count,
    metricIds: z.array(z.string()),
    headline: z.object({ metricId: z.string(), targetDate: z.string().nullable() }).nullable(),
    headlineImpact: z.number().nullable().describe('Approved minus declined consensus on the headline metric and date.'),
    impact: z.array(
      z.object({
        metricId: z.string(),
        metricName: z.string(),
        targetDate: z.string(),
        resolvesOn: z.string(),
        expected: z.boolean(),
        approved: branchImpact,
        declined: branchImpact,
        impact: z.number().nullable(),
      }),
    ),
    conditionalMarkets: z.array(marketSchema),
    scorecard: z.array(scorecardRowSchema),
  })
  .meta({ id: 'Proposal' });

export const commentSchema = z.object({
  id: z.string(),
  proposalId: z.string(),
  authorId: z.string().nullable(),
  authorNickname: z.string().nullable(),
  parentId: z.string().nullable(),
  body: z.string(),
  createdAt: instant,
});

const stats = z.object({
  resolved: count,
  predicted: count,
  withinRange: count,
  withinRangeRate: z.number().nullable(),
  meanAbsoluteError: z.number().nullable(),
  meanRelativeError: z.number().nullable(),
  closerThanOther: count,
  closerThanOtherRate: z.number().nullable(),
});

export const workspaceScorecardSchema = z.object({
  workspaceId: z.string(),
  tolerance: z.number(),
  summary: stats,
  byDecision: z.object({ approved: stats, declined: stats }),
  undecided: count,
  total: count,
  entries: z.array(scorecardRowSchema),
});

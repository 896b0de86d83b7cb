import { z } from 'zod';
import { creditAmount, direction, instant, nullableInstant } from './output';
import { positionSchema } from './participants';

/** Response schemas of the standings area (issue 23): public profile, leaderboard, seasons. */
const ref = z.object({ id: z.string(), nickname: z.string() });
/** Where a profile's position or trade is: the workspace by name and slug, the proposal by title. */
const bookPlace = { workspaceName: z.string(), workspaceSlug: z.string(), proposalTitle: z.string().nullable() };
const score = z.number().min(0).max(1).nullable();

export const reliabilityBinSchema = z.object({
  from: z.number(),
  to: z.number(),
  trades: z.number().int(),
  meanForecast: z.number().nullable(),
  meanOutcome: z.number().nullable(),
});

export const profileStatsSchema = z.object({
  rank: z.number().int().nullable(),
  calibration: score.describe('1 - Brier score of the probabilities the trades left against the outcome position in range (seasons guide)'),
  accuracy: score.describe('1 - mean absolute error, normalised by range, of the consensus the trades left against the realised value'),
  brier: z.number().nullable(),
  meanAbsError: z.number().nullable(),
  scoredTrades: z.number().int(),
  calibrationBins: z.array(reliabilityBinSchema),
  totalEarnings: creditAmount,
  settledEarnings: creditAmount,
  openEarnings: creditAmount,
  resolvedMarkets: z.number().int(),
  totalTrades: z.number().int(),
  tradedVolume: creditAmount,
  lastTradeAt: nullableInstant,
});

export const publicProfileSchema = z.object({
  id: z.string(),
  nickname: z.string(),
  intent: z.string(),
  bio: z.string(),
  joinedAt: instant,
  parent: ref.nullable(),
  children: z.array(ref),
  balance: creditAmount,
  balanceHistory: z.array(z.object({ at: instant, balance: creditAmount })),
  profitHistory: z.array(z.object({ at: instant, profit: creditAmount })),
  pnlHistory: z.array(z.object({ at: instant, cumulative: creditAmount })),
  stats: profileStatsSchema,
  activeWorkspaces: z.array(z.object({ id: z.string(), name: z.string() })),
  openPositions: z.array(positionSchema.omit({ branch: true, sellValue: true, sellProfit: true }).extend(bookPlace)),
  recentTrades: z.array(
    z.object({
      id: z.string(),
      workspaceId: z.string(),
      ...bookPlace,
      marketId: z.string(),
      proposalId: z.string().nullable(),
      metricName: z.string(),
      targetDate: z.string(),
      direction: direction.nullable(),
      kind: z.enum(['buy', 'sell', 'redeem']),
      shares: creditAmount,
      cost: creditAmount,
      price: z.number().nullable(),
      consensusBefore: z.number(),
      consensusAfter: z.number(),
      createdAt: instant,
    }),
  ),
  transfers: z.array(z.object({ id: z.string(), direction: z.enum(['in', 'out']), counterparty: ref.nullable(), credits: creditAmount, memo: z.string().nullable(), createdAt: instant })),
  bots: z.array(z.object({ id: z.string(), nickname: z.string(), parentId: z.string(), totalEarnings: creditAmount, totalTrades: z.number().int() })),
  withBotsEarnings: creditAmount.nullable(),
  bot: z.boolean(),
  runBy: z.string().nullable(),
  model: z.string().nullable(),
  owner: ref.nullable(),
  walletAddress: z.string().nullable().optional().describe('Only for yourself, an owned bot, or the master key'),
  notifications: z.record(z.string(), z.boolean()).optional().describe('Only for yourself, an owned bot, or the master key'),
});

export const leaderboardRowSchema = z.object({
  rank: z.number().int(),
  agent: ref,
  bot: z.boolean(),
  earnings: creditAmount.describe('Settled earnings on resolved books'),
  calibration: score,
  accuracy: score,
  volume: creditAmount,
  resolvedMarkets: z.number().int(),
  trades: z.number().int(),
});

export const seasonSchema = z.object({
  id: z.string(),
  name: z.string(),
  startsAt: instant,
  endsAt: instant,
  status: z.enum(['upcoming', 'active', 'ended']),
});

export const leaderboardSchema = z.object({
  season: seasonSchema.nullable(),
  workspaceId: z.string().nullable(),
  metricId: z.string().nullable(),
  sort: z.enum(['earnings', 'calibration', 'accuracy', 'volume']),
  minResolvedMarkets: z.number().int(),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  rows: z.array(leaderboardRowSchema),
});

export const seasonWithStandingsSchema = seasonSchema.extend({ frozen: z.boolean(), standings: leaderboardSchema });

const marketplaceFigures = { volume: creditAmount, openBooks: z.number().int(), participants: z.number().int(), proposalsDecided: z.number().int() };
export const marketplaceStatsSchema = z.object({
  overall: z.object({ workspaces: z.number().int(), ...marketplaceFigures, asOf: z.string().describe('When these platform-wide totals were computed (they are kept up to PLATFORM_TOTALS_TTL_MS, 30 s by default).') }),
  workspaces: z.array(z.object({ id: z.string(), slug: z.string(), name: z.string(), ...marketplaceFigures })).describe('A page of public workspaces in name order (limit, cursor).'),
  nextCursor: z.string().nullable().describe('Pass as ?cursor= for the next page of workspaces; null on the last page.'),
});

/** A page of public workspaces (GET /marketplace/stats, GET /benchmark): name order, 100 by default. */
export const publicPageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('Workspaces per page (1-1000, default 100); the overall figures always cover every public workspace.'),
  cursor: z.string().max(2000).optional().describe('The nextCursor of the previous page.'),
});

const horizonErrors = z.array(z.object({ horizon: z.enum(['day', 'week', 'month', 'year', 'longer']), books: z.number().int(), meanAbsError: z.number().nullable() }));
const hitRate = { decided: z.number().int(), withinRange: z.number().int(), hitRate: z.number().nullable() };
export const benchmarkSchema = z.object({
  overall: z.object({ meanAbsErrorByHorizon: horizonErrors, scorecard: z.object(hitRate), asOf: z.string().describe('When these platform-wide totals were computed (kept up to PLATFORM_TOTALS_TTL_MS, 30 s by default).') }),
  workspaces: z.array(
    z.object({ id: z.string(), slug: z.string(), name: z.string(), meanAbsErrorByHorizon: horizonErrors, scorecard: z.object({ ...hitRate, tolerance: z.number() }) }),
  ).describe('A page of public workspaces in name order (limit, cursor).'),
  nextCursor: z.string().nullable().describe('Pass as ?cursor= for the next page of workspaces; null on the last page.'),
});

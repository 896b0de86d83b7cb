import { z } from 'zod';
import { branch, count, creditAmount, direction, instant, nullableInstant, warnings } from './output';

export const marketStatus = z.enum(['open', 'conditional', 'closed', 'resolved', 'voided']);

/** presentMarket (presenters/market.ts). */
export const marketSchema = z
  .object({
    id: z.uuid(),
    metricId: z.string(),
    metricName: z.string(),
    proposalId: z.string().nullable(),
    branch: branch.nullable(),
    targetDate: z.string(),
    resolvesOn: z.string(),
    title: z.string().nullable(),
    prediction: z.number().nullable().describe('Same as consensus (condensed name).'),
    consensus: z.number().nullable().describe('rangeMin + probability * (rangeMax - rangeMin); null while unfunded.'),
    probability: z.number().nullable(),
    rangeMin: z.number(),
    rangeMax: z.number(),
    liquidity: creditAmount,
    liquidityParameter: creditAmount,
    funded: z.boolean(),
    shares: z.object({ higher: creditAmount, lower: creditAmount }),
    tradeCount: count,
    volume: creditAmount,
    status: marketStatus,
    resolved: z.boolean(),
    resolvedValue: z.number().nullable(),
    resolvedAt: nullableInstant,
    settledEarly: z.boolean().describe('Resolved before its period ended (POST /metrics/{id}/settle).'),
    settleReason: z.string().nullable().describe('The reason given for an early settlement; null otherwise.'),
    payoutPerShare: z
      .object({ higher: z.number(), lower: z.number() })
      .nullable()
      .describe('Credits one share paid at resolution: higher pays (resolvedValue - rangeMin) / (rangeMax - rangeMin), clamped to 0..1, lower the rest; null unless resolved.'),
    voidReason: z.string().nullable(),
    manual: z.boolean().describe('Opened by hand (POST /predictions/markets), outside the horizon plan.'),
    tradingEndsAt: nullableInstant,
    createdAt: instant,
  })
  .meta({ id: 'Market' });

/** presentMarketSummary. */
export const marketSummarySchema = z.object({
  id: z.uuid(),
  targetDate: z.string(),
  resolvesOn: z.string(),
  prediction: z.number().nullable(),
  probability: z.number().nullable(),
  rangeMin: z.number(),
  rangeMax: z.number(),
});

export const marketHistorySchema = z.object({
  marketId: z.uuid(),
  opened: z.object({ probability: z.number().nullable(), consensus: z.number().nullable(), at: instant }),
  points: z.array(z.object({ at: instant, tradeId: z.string(), kind: z.string(), direction: z.string(), consensus: z.number(), probability: z.number() })),
});

/** Price-guard and target-mode details (services/trading tradeFigures, presenters/trade): present only when they apply. */
const guard = {
  limited: z.boolean().optional(),
  spent: creditAmount.optional(),
  unspent: creditAmount.optional(),
  sharesSold: creditAmount.optional(),
  sharesKept: creditAmount.optional(),
};

const tradeFigures = {
  marketId: z.uuid(),
  direction,
  shares: creditAmount,
  cost: creditAmount.optional().describe('Credits paid (buys).'),
  proceeds: creditAmount.optional().describe('Credits received (sells).'),
  redeemed: creditAmount,
  consensus: z.number(),
  prevConsensus: z.number(),
  probability: z.number(),
  balance: creditAmount,
  ...guard,
  // Limit orders (issue 14): the resting orders a buy traded against, at their limits.
  limitFills: z.array(z.object({ orderId: z.uuid(), shares: creditAmount, price: z.number(), cost: creditAmount })).optional(),
  warnings,
};

/** POST /predictions/trade: an applied trade, or its price with dryRun. */
export const tradeResultSchema = z.union([
  z
    .object({
      ...tradeFigures,
      tradeId: z.uuid(),
      kind: z.enum(['buy', 'sell']),
      position: z.object({ direction: direction.nullable(), shares: creditAmount }),
      idempotentReplay: z.boolean().describe('True when this answer repeats an earlier request with the same Idempotency-Key.'),
    })
    .meta({ id: 'TradeResult' }),
  z
    .object({
      ...tradeFigures,
      dryRun: z.literal(true),
      affordable: z.boolean(),
      shortfall: creditAmount,
      basis: z.object({ tradeCount: count, liquidity: creditAmount, consensus: z.number().nullable() }),
    })
    .meta({ id: 'TradeQuote' }),
]);

/** presentVoid (presenters/market.ts). */
export const voidResultSchema = z.object({
  market: marketSchema,
  refunded: creditAmount.describe('Credits refunded to the holders (each position at its net cost); the pool remainder goes back to its funders besides.'),
});

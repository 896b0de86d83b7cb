import { z } from 'zod';
import { marketSchema } from './markets';
import { branch, count, creditAmount, ok } from './output';

/** Issue 28: what opening books cost, which stayed unfunded and why, and funding one later. */

/** presentBookCost (presenters/funding.ts). */
export const bookCostSchema = z
  .object({
    marketId: z.uuid().nullable().describe('Null in a dry run: nothing was created.'),
    metricId: z.string(),
    targetDate: z.string(),
    horizonEntry: z.string().nullable(),
    branch: branch.nullable(),
    funded: z.boolean(),
    subsidy: creditAmount.describe('Credits moved from the funder into this book (0 when it stayed unfunded).'),
    planned: creditAmount.describe('The subsidy the book was planned to open with.'),
    funderId: z.string().nullable().describe('Who pays its subsidy.'),
  })
  .meta({ id: 'BookCost' });

/** presentUnfundedBook. */
export const unfundedBookSchema = z
  .object({
    marketId: z.uuid().nullable().describe('Null in a dry run: nothing was created.'),
    metricId: z.string(),
    targetDate: z.string(),
    branch: branch.nullable(),
    reason: z.enum(['insufficient_balance', 'no_liquidity']).describe('insufficient_balance: its funder could not pay; no_liquidity: its configured subsidy is 0.'),
    needed: creditAmount.describe('Credits that fund it: POST /predictions/markets/{marketId}/fund, or the owner refreshes once its balance covers it.'),
  })
  .meta({ id: 'UnfundedBook' });

/** What an act that opens books cost (the 201 of POST /metrics and POST /proposals). */
export const openingCost = {
  subsidySpent: creditAmount.describe('Credits this act moved into the books it opened, in total.'),
  books: z.array(bookCostSchema),
  unfundedBooks: z.array(unfundedBookSchema),
};

/** A dry run of an act that opens books: nothing written. */
export const openingQuote = {
  dryRun: z.literal(true),
  ...openingCost,
  subsidyNeeded: creditAmount.describe('What every book it would open needs, in total.'),
  payerId: z.string().describe('Who pays the subsidy.'),
  balance: creditAmount.describe("The payer's balance now."),
  balanceCovers: z.boolean().describe('Whether the balance covers every book it would open.'),
  refusal: z
    .looseObject({ error: z.string(), code: z.string(), doc_url: z.string() })
    .nullable()
    .describe('The refusal the real call would answer instead of creating anything (a proposer who cannot fund every book: insufficient_balance), or null when it would create.'),
};

/** POST /predictions/markets/{id}/fund. */
export const fundResultSchema = z.object({
  ok,
  market: marketSchema,
  subsidy: creditAmount.describe('Credits the caller moved into the book; they come back with the pool at resolution or void, pro rata among funders.'),
  balance: creditAmount,
  idempotentReplay: z.boolean(),
});

/** The owner's funding by the refresh endpoint. */
export const refreshFunding = {
  funded: z.array(z.object({ marketId: z.uuid(), metricId: z.string(), targetDate: z.string(), subsidy: creditAmount })),
  unfunded: z.array(unfundedBookSchema),
  fundedCount: count,
};

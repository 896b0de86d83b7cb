import { z } from 'zod';
import { STATEMENT_KIND_LIST } from '../../services/credits';

/** Response schemas of the credit routes (as presented: credits as numbers, token amounts as decimal strings of units). */
const instant = z.iso.datetime({ offset: true });
const nullableInstant = instant.nullable();
const creditAmount = z.number();
const replay = z.literal(true).optional();
export const transferRowSchema = z.object({ id: z.string(), fromAgent: z.string(), toAgent: z.string(), amount: creditAmount, memo: z.string().nullable(), createdAt: instant });
export const transferResultSchema = transferRowSchema.extend({ balance: creditAmount, idempotentReplay: replay });
export const withdrawalQuoteSchema = z.object({
  dryRun: z.literal(true),
  amount: creditAmount,
  tokenAmount: z.string().describe('Token units (USDC_DECIMALS) that would be sent.'),
  toAddress: z.string(),
  review: z.boolean().describe('Above WITHDRAW_REVIEW_CREDITS: it would wait for the operator.'),
  balance: creditAmount,
  balanceAfter: creditAmount,
  affordable: z.boolean(),
});
export const transferQuoteSchema = z.object({
  dryRun: z.literal(true),
  toAgent: z.string(),
  toNickname: z.string(),
  amount: creditAmount,
  balance: creditAmount,
  balanceAfter: creditAmount,
  affordable: z.boolean(),
});
export const signupGrantSchema = z.object({
  credits: creditAmount.describe('The sign-up grant this instance gives (SIGNUP_CREDITS).'),
  available: z.boolean().describe('Whether the caller may take it now: a signed-in person whose participant was never paid a sign-up grant.'),
  paidAt: nullableInstant.describe('When it was paid to the caller (or an onboarding grant was), else null.'),
  balance: creditAmount.optional().describe('The balance after it was paid (POST only).'),
  idempotentReplay: replay,
});
export const spendSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  amount: creditAmount,
  type: z.enum(['tokens', 'purchase', 'betting']),
  reason: z.string(),
  balance: creditAmount,
  createdAt: instant,
  idempotentReplay: replay,
});
export const creditSchema = z.object({ ok: z.literal(true), agentId: z.string(), amount: creditAmount, balance: creditAmount, issued: z.boolean(), idempotentReplay: replay });
export const walletSchema = z.object({ agentId: z.string(), walletAddress: z.string(), updatedAt: instant });
export const depositSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  chainId: z.number().int(),
  txHash: z.string(),
  status: z.enum(['pending', 'credited', 'rejected', 'flagged']),
  reason: z.string().nullable(),
  fromAddress: z.string().nullable(),
  amountPaid: z.string().nullable().describe('Token units paid (e.g. 6 decimals for USDC), as a decimal string'),
  credits: creditAmount.nullable(),
  fee: creditAmount.nullable(),
  blockNumber: z.number().int().nullable(),
  blockHash: z.string().nullable(),
  checks: z.number().int(),
  final: z.boolean(),
  createdAt: instant,
  updatedAt: nullableInstant,
});
export const withdrawalSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  amount: creditAmount,
  tokenAmount: z.string().describe('Token units sent, as a decimal string'),
  toAddress: z.string(),
  status: z.enum(['review', 'queued', 'signed', 'confirmed', 'failed', 'rejected']),
  reason: z.string().nullable(),
  txHash: z.string().nullable(),
  nonce: z.number().int().nullable(),
  blockNumber: z.number().int().nullable(),
  createdAt: instant,
  updatedAt: nullableInstant,
  idempotentReplay: replay,
});
export const depositAddressSchema = z.object({
  address: z.string(),
  chainId: z.number().int(),
  asset: z.string(),
  contract: z.string(),
  decimals: z.number().int(),
  confirmations: z.number().int(),
  creditValueUsd: z.number(),
  buyFeePercent: z.number(),
});
export const treasurySchema = z.object({
  address: z.string(),
  chainId: z.number().int(),
  contract: z.string(),
  tokenBalance: z.string().describe("The treasury's token balance on chain, in the token's units (USDC), as a decimal string."),
  gasBalance: z.string().describe("The treasury's gas balance on chain, in the chain's native unit (ETH), as a decimal string."),
  balance: creditAmount.describe('The token balance in credits (at CREDIT_VALUE_USD a credit), to compare with creditsOutstanding.'),
  creditsOutstanding: creditAmount.describe('Credits held by participants plus withdrawals in flight.'),
  withdrawalsPending: creditAmount.describe('Credits of withdrawals in flight.'),
  units: z
    .object({ tokenBalance: z.literal('USDC'), gasBalance: z.literal('ETH'), balance: z.literal('credits'), creditsOutstanding: z.literal('credits'), withdrawalsPending: z.literal('credits') })
    .describe('The unit of each amount above.'),
});

export const ledgerLegSchema = z.object({
  id: z.string().describe('The ledger row id; ids increase in ledger order.'),
  kind: z.enum(STATEMENT_KIND_LIST as [string, ...string[]]).describe('What the leg was: trade, order, order_refund, payout, refund, subsidy, subsidy_return, transfer, credit, signup_grant, deposit, withdrawal, withdrawal_restore, spend, closure, other.'),
  ledgerKind: z.string().describe("The ledger's own kind (trade, redeem, fund, pool_return, mint, spend:tokens, ...)."),
  amount: creditAmount.describe('Signed credits: positive in, negative out.'),
  balanceAfter: creditAmount.describe('The balance right after this leg (exact).'),
  createdAt: instant,
  memo: z.string().nullable(),
  ledgerTransferId: z.string().describe('The balanced ledger transfer the leg belongs to.'),
  cause: z
    .object({
      marketId: z.string().optional(),
      proposalId: z.string().optional(),
      branch: z.string().optional(),
      transferId: z.string().optional(),
      depositId: z.string().optional(),
      withdrawalId: z.string().optional(),
      orderId: z.string().optional(),
      spendId: z.string().optional(),
      creditedBy: z.string().optional(),
    })
    .describe('What caused the leg, as far as the ledger row says: the market (and its proposal and branch), the transfer, deposit, withdrawal, order or spend, or who credited it.'),
});
export const ledgerStatementSchema = z.object({
  agentId: z.string(),
  balance: creditAmount,
  entries: z.array(ledgerLegSchema),
  nextCursor: z.string().nullable().describe('Pass as ?cursor= for the next (older) page; null on the last page.'),
});

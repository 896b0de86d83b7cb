import { z } from 'zod';

/** Response schemas of the credit routes (as presented: credits as numbers, token amounts as decimal strings of units). */
const instant = z.iso.datetime({ offset: true });
const nullableInstant = instant.nullable();
const creditAmount = z.number();
const replay = z.literal(true).optional();
export const transferRowSchema = z.object({ id: z.string(), fromAgent: z.string(), toAgent: z.string(), amount: creditAmount, memo: z.string().nullable(), createdAt: instant });
export const transferResultSchema = transferRowSchema.extend({ balance: creditAmount, idempotentReplay: replay });
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
  tokenBalance: z.string(),
  gasBalance: z.string(),
  balance: creditAmount,
  creditsOutstanding: creditAmount,
  withdrawalsPending: creditAmount,
});

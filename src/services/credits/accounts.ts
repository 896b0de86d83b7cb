/** The named system accounts credits move through (opened by migration 1763800100000-Credits). */
export const creditAccounts = {
  /** Where spent credits go, one sink per spend type. */
  spend: (type: SpendType) => `spend:${type}`,
  /** The deposit fee (the part of a deposit not issued as credits). */
  depositFees: 'fees:deposit',
  /** Credits of withdrawals not yet paid or refused. */
  withdrawalsPending: 'withdrawals:pending',
  /** The chain side: debited by every deposit (issuance), credited by every paid withdrawal. */
  onchain: 'onchain:usdc',
} as const;

export const SPEND_TYPES = ['tokens', 'purchase', 'betting'] as const;
export type SpendType = (typeof SPEND_TYPES)[number];

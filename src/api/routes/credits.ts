import { z } from 'zod';
import { DomainError } from '../../errors';
import { policies } from '../../services/access';
import {
  creditParticipant,
  decideWithdrawal,
  depositAddress,
  depositOf,
  depositsOf,
  listTransfers,
  registerWallet,
  requestWithdrawal,
  SPEND_TYPES,
  spendCredits,
  submitDeposit,
  quoteTransfer,
  quoteWithdrawal,
  transferCredits,
  treasuryStatus,
  withdrawalsOf,
  ledgerStatement,
  signupGrantOf,
  takeSignupGrant,
} from '../../services/credits';
import {
  presentCredit,
  presentDeposit,
  presentDepositAddress,
  presentSignupGrant,
  presentSpend,
  presentStatement,
  presentTransfer,
  presentTransferQuote,
  presentTransferResult,
  presentWithdrawalQuote,
  presentTreasury,
  presentWallet,
  presentWithdrawal,
} from '../presenters/credits';
import { idempotencyKey } from '../idempotency';
import { defineRoute } from '../registry';
import { limitQuery, positiveCredits, uuidParam } from '../schemas/common';
import {
  creditSchema,
  depositAddressSchema,
  depositSchema,
  ledgerStatementSchema,
  signupGrantSchema,
  spendSchema,
  transferQuoteSchema,
  transferResultSchema,
  withdrawalQuoteSchema,
  transferRowSchema,
  treasurySchema,
  walletSchema,
  withdrawalSchema,
} from '../schemas/credits';

// Static /agents/... paths here are registered before agents.ts's /agents/:id (see routes/index.ts).

const moneyErrors = ['insufficient_balance', 'idempotency_key_reuse', 'not_found'] as const;

export const postAgentsTransfer = defineRoute({
  method: 'POST',
  path: '/agents/transfer',
  idempotent: true,
  auth: policies.credits.transfer,
  summary:
    'Transfer credits { toAgent (id or nickname), amount > 0, memo? (max 200) } from the caller; atomic; 409 insufficient_balance when short; Idempotency-Key header. The master key cannot move funds. dryRun: true answers who would receive it (toNickname), your balance and the balance after, and writes nothing.',
  body: z.strictObject({
    toAgent: z.string().min(1).max(200),
    amount: positiveCredits,
    memo: z.string().max(200, 'must be at most 200 characters').optional(),
    dryRun: z.boolean({ error: 'must be true or false' }).optional(),
  }),
  errorStatus: { insufficient_balance: 409 },
  response: transferResultSchema,
  dryRunResponse: transferQuoteSchema,
  errors: [...moneyErrors, 'funds_move_forbidden'],
  handler: async (c) => {
    if (c.body.dryRun) return presentTransferQuote(await quoteTransfer(c.deps, c.identity(), c.body));
    const { value, replay } = await transferCredits(c.deps, c.identity(), { ...c.body, idempotencyKey: idempotencyKey(c) });
    return presentTransferResult(value, replay);
  },
});

export const getAgentsTransfers = defineRoute({
  method: 'GET',
  path: '/agents/transfers',
  auth: policies.credits.readTransfers,
  summary: "The caller's transfers, newest first: query direction=in|out|all (default all), limit (default 50, max 200), agentId (master key only).",
  query: z.object({ direction: z.enum(['in', 'out', 'all']).default('all'), limit: limitQuery(50, 200), agentId: z.string().min(1).max(200).optional() }),
  response: z.array(transferRowSchema),
  errors: ['not_authorized'],
  handler: async (c) => {
    policies.credits.requireMayListTransfersOf(c.identity(), c.query.agentId);
    return (await listTransfers(c.deps, c.identity(), c.query)).map(presentTransfer);
  },
});

export const getAgentsSignupGrant = defineRoute({
  method: 'GET',
  path: '/agents/signup-grant',
  readsPrimary: true,
  auth: policies.credits.readSignupGrant,
  summary: 'The sign-up grant (SIGNUP_CREDITS, the full signup grant of a claimed identity): { credits, available, paidAt }. Available to a person signed in with an account whose participant was never paid one.',
  response: signupGrantSchema,
  handler: async (c) => presentSignupGrant(await signupGrantOf(c.deps, c.identity())),
});

export const postAgentsSignupGrant = defineRoute({
  method: 'POST',
  path: '/agents/signup-grant',
  idempotent: true,
  auth: policies.credits.claimSignupGrant,
  summary: 'Take the sign-up grant: SIGNUP_CREDITS issued to the signed-in person\'s participant, once per participant (409 grant_taken after; an onboarding grant counts). Browser session only (403 session_required for a key); 409 grant_unavailable when the instance gives none. Idempotency-Key header. Returns { credits, available, paidAt, balance }.',
  response: signupGrantSchema,
  errors: ['session_required', 'grant_taken', 'grant_unavailable', 'idempotency_key_reuse'],
  handler: async (c) => {
    const { value, replay } = await takeSignupGrant(c.deps, c.identity(), idempotencyKey(c));
    return presentSignupGrant(value, replay);
  },
});

export const getAgentsDepositAddress = defineRoute({
  method: 'GET',
  path: '/agents/deposit-address',
  readsPrimary: true,
  auth: policies.credits.readDepositAddress,
  summary: 'Where to deposit: treasury address, chainId, asset, token contract, decimals, confirmations required, creditValueUsd, buyFeePercent. 503 treasury_not_configured without a chain.',
  response: depositAddressSchema,
  errors: ['treasury_not_configured'],
  handler: async (c) => presentDepositAddress(depositAddress(c.deps)),
});

export const getAgentsTreasury = defineRoute({
  method: 'GET',
  path: '/agents/treasury',
  readsPrimary: true,
  auth: policies.credits.readTreasury,
  summary: 'The treasury: address, on-chain token and gas balances, credits outstanding (held by participants plus withdrawals pending). Master key, or manage in the named workspace.',
  response: treasurySchema,
  errors: ['treasury_not_configured'],
  handler: async (c) => {
    if (!c.identity().isMaster) c.require('manage');
    return presentTreasury(await treasuryStatus(c.deps));
  },
});

/** Approve and reject are one route shape, defined once per decision. */
function withdrawalDecision(decision: 'approve' | 'reject') {
  return defineRoute({
    method: 'POST',
    path: `/agents/withdrawals/:id/${decision}`,
    auth: policies.credits.decideWithdrawal,
    summary:
      decision === 'approve'
        ? 'Approve a withdrawal waiting for review (above WITHDRAW_REVIEW_CREDITS): it is sent. Platform operator only.'
        : 'Reject a withdrawal waiting for review { reason? }: its credits are restored. Platform operator only.',
    params: uuidParam('a withdrawal'),
    body: z.strictObject({ reason: z.string().max(500).optional() }).optional(),
    response: withdrawalSchema,
    errors: ['not_found', 'conflict', 'treasury_not_configured'],
    handler: async (c) => presentWithdrawal(await decideWithdrawal(c.deps, c.identity(), c.params.id, decision, c.body?.reason)),
  });
}
export const postAgentsWithdrawalsByIdApprove = withdrawalDecision('approve');
export const postAgentsWithdrawalsByIdReject = withdrawalDecision('reject');

const agentParam = z.object({ id: z.string().min(1).max(200) });

export const postAgentsByIdCredit = defineRoute({
  method: 'POST',
  path: '/agents/:id/credit',
  idempotent: true,
  auth: policies.credits.credit,
  errorStatus: { insufficient_balance: 409 },
  summary: 'Credit a workspace member: the master key issues new credits; a caller with manage moves its own (409 when short). Idempotency-Key header.',
  params: agentParam,
  body: z.object({ amount: positiveCredits, reason: z.string().max(500).optional() }),
  response: creditSchema,
  errors: [...moneyErrors, 'conflict'],
  handler: async (c) => {
    const caller = c.identity();
    if (!caller.isMaster) c.require('manage');
    const { value, replay } = await creditParticipant(c.deps, {
      callerId: caller.agentId,
      isMaster: caller.isMaster,
      workspaceId: c.access?.workspace.id ?? null,
      targetId: c.params.id,
      amount: c.body.amount,
      reason: c.body.reason,
      idempotencyKey: idempotencyKey(c),
    });
    return presentCredit(value, replay);
  },
});

export const postAgentsByIdSpend = defineRoute({
  method: 'POST',
  path: '/agents/:id/spend',
  idempotent: true,
  auth: policies.credits.spend,
  errorStatus: { insufficient_balance: 409 },
  summary: 'Spend credits { amount, type: tokens|purchase|betting, reason }: they leave to the type\'s sink account. tokens and purchase by the participant itself (or its creator); betting by the platform operator only. Idempotency-Key header.',
  params: agentParam,
  body: z.strictObject({ amount: positiveCredits, type: z.enum(SPEND_TYPES), reason: z.string().trim().min(1, 'must not be blank: say what the credits are spent on').max(500) }),
  response: spendSchema,
  errors: [...moneyErrors, 'not_authorized', 'funds_move_forbidden'],
  handler: async (c) => {
    policies.credits.requireMaySpend(c.identity(), c.body.type);
    const { value, replay } = await spendCredits(c.deps, c.identity(), { idParam: c.params.id, ...c.body, idempotencyKey: idempotencyKey(c) });
    return presentSpend(value, replay);
  },
});

export const putAgentsByIdWallet = defineRoute({
  method: 'PUT',
  path: '/agents/:id/wallet',
  auth: policies.credits.setWallet,
  summary: 'Register the wallet { walletAddress } (stored checksummed): deposits must come from it, withdrawals are sent to it.',
  params: agentParam,
  body: z.strictObject({ walletAddress: z.string().min(1).max(100) }),
  response: walletSchema,
  errors: ['not_found', 'not_authorized'],
  handler: async (c) => presentWallet(await registerWallet(c.deps, c.identity(), c.params.id, c.body.walletAddress)),
});

export const postAgentsByIdDeposit = defineRoute({
  method: 'POST',
  path: '/agents/:id/deposit',
  auth: policies.credits.deposit,
  summary:
    'Claim a USDC deposit { txHash }: 202 with the pending record; a job verifies it (receipt, confirmations, a Transfer of the token to the treasury from your registered wallet) and issues floor(paid / (creditValueUsd x (1 + buyFeePercent/100))) credits. The same tx again: 409 deposit_duplicate, with the first record only for its participant, that participant\'s owner and the operator.',
  params: agentParam,
  body: z.strictObject({ txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x and 64 hex digits') }),
  successStatus: 202,
  response: depositSchema,
  errors: ['deposit_duplicate', 'treasury_not_configured', 'not_found', 'not_authorized'],
  handler: async (c) => {
    const r = await submitDeposit(c.deps, c.identity(), c.params.id, c.body.txHash);
    if (r.duplicate && r.visible) {
      throw new DomainError('deposit_duplicate', 'This transaction was already submitted as a deposit; each transaction credits once.', { deposit: presentDeposit(r.deposit) });
    }
    if (r.duplicate) {
      // Someone else's claim: no record (its participant, sender, amount and credits are theirs to see).
      throw new DomainError('deposit_duplicate', 'This transaction was already claimed as a deposit by another participant; each transaction credits once.');
    }
    c.status(202);
    return presentDeposit(r.deposit);
  },
});

export const getAgentsByIdDeposits = defineRoute({
  method: 'GET',
  path: '/agents/:id/deposits',
  auth: policies.credits.readDeposits,
  summary: "A participant's deposits, newest first: pending, credited (block number and hash), rejected (reason) or flagged (its block left the chain). Query limit (default 50, max 200).",
  params: agentParam,
  query: z.object({ limit: limitQuery(50, 200) }),
  response: z.array(depositSchema),
  errors: ['not_found', 'not_authorized'],
  handler: async (c) => (await depositsOf(c.deps, c.identity(), c.params.id, c.query.limit)).map(presentDeposit),
});

export const getAgentsByIdDepositsByDepositId = defineRoute({
  method: 'GET',
  path: '/agents/:id/deposits/:depositId',
  auth: policies.credits.readDeposit,
  summary: 'One deposit record.',
  params: z.object({ id: z.string().min(1).max(200), depositId: z.string().uuid('must be a deposit id') }),
  response: depositSchema,
  errors: ['not_found', 'not_authorized'],
  handler: async (c) => presentDeposit(await depositOf(c.deps, c.identity(), c.params.id, c.params.depositId)),
});

export const postAgentsByIdWithdraw = defineRoute({
  method: 'POST',
  path: '/agents/:id/withdraw',
  idempotent: true,
  auth: policies.credits.withdraw,
  errorStatus: { insufficient_balance: 409 },
  summary:
    'Withdraw { amount } credits: 202 with the record; amount x creditValueUsd of USDC is sent to the registered wallet (confirmed: final; reverted or failed: credits restored). Above WITHDRAW_REVIEW_CREDITS it waits for the operator (status review). Idempotency-Key header. dryRun: true answers 200 with where it would go, the token amount, whether it would wait for review and the balance after, and writes nothing.',
  params: agentParam,
  body: z.strictObject({ amount: positiveCredits, dryRun: z.boolean({ error: 'must be true or false' }).optional() }),
  successStatus: 202,
  response: withdrawalSchema,
  dryRunResponse: withdrawalQuoteSchema,
  errors: [...moneyErrors, 'wallet_required', 'treasury_not_configured', 'not_authorized'],
  handler: async (c) => {
    if (c.body.dryRun) return presentWithdrawalQuote(await quoteWithdrawal(c.deps, c.identity(), { idParam: c.params.id, amount: c.body.amount }));
    const { value, replay } = await requestWithdrawal(c.deps, c.identity(), { idParam: c.params.id, amount: c.body.amount, idempotencyKey: idempotencyKey(c) });
    c.status(202);
    return presentWithdrawal(value, replay);
  },
});

export const getAgentsByIdWithdrawals = defineRoute({
  method: 'GET',
  path: '/agents/:id/withdrawals',
  auth: policies.credits.readWithdrawals,
  summary: "A participant's withdrawals, newest first: review, queued, signed (sent, waiting for confirmations), confirmed, failed (credits restored, reason) or rejected. Query limit (default 50, max 200).",
  params: agentParam,
  query: z.object({ limit: limitQuery(50, 200) }),
  response: z.array(withdrawalSchema),
  errors: ['not_found', 'not_authorized'],
  handler: async (c) => (await withdrawalsOf(c.deps, c.identity(), c.params.id, c.query.limit)).map((w) => presentWithdrawal(w)),
});

export const getAgentsByIdLedger = defineRoute({
  method: 'GET',
  path: '/agents/:id/ledger',
  auth: policies.credits.readLedger,
  summary:
    "A participant's ledger statement (account history), newest first: every leg with its kind (trade, order, payout, refund, subsidy, subsidy_return, transfer, credit, deposit, withdrawal, spend, ...), signed amount, balance after, time and cause (market, proposal, transfer, deposit, withdrawal, order). Query cursor, limit (default 50, max 500).",
  params: agentParam,
  query: z.object({ limit: limitQuery(50, 500), cursor: z.string().min(1).max(200).optional() }),
  response: ledgerStatementSchema,
  errors: ['not_found', 'not_authorized'],
  handler: async (c) => presentStatement(await ledgerStatement(c.deps, c.identity(), c.params.id, c.query)),
});

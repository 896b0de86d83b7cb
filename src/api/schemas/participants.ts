import { deletionSchema } from './deletions';
import { z } from 'zod';
import { count, creditAmount, direction, branch, instant, nullableInstant, ok, warnings } from './output';
import { marketStatus, marketSummarySchema } from './markets';

const agentFields = {
  id: z.string(),
  name: z.string().describe('Same as nickname.'),
  nickname: z.string(),
  operator: z.string().nullable(),
  bio: z.string(),
  parent: z.string().nullable(),
  bot: z.boolean(),
  unclaimed: z.boolean(),
  balance: creditAmount,
  createdAt: instant,
  joinedAt: instant,
};

/** presentAgent (presenters/agent.ts). */
export const agentSchema = z.object({ ...agentFields, intent: z.string() }).meta({ id: 'Participant' });

export const registrationSchema = z.object({
  agentId: z.string(),
  apiKey: z.string().describe('Shown once.'),
  keyId: z.string(),
  nickname: z.string(),
  bio: z.string(),
  operator: z.string().nullable(),
  scopes: z.array(z.string()),
  balance: creditAmount,
  warnings,
});

export const balanceSchema = z.object({ agentId: z.string(), balance: creditAmount });

export const childSchema = z.object({
  agentId: z.string(),
  nickname: z.string(),
  parentId: z.string(),
  apiKey: z.string().describe('Shown once.'),
  keyId: z.string(),
  scopes: z.array(z.string()),
  label: z.string(),
  memberships: z.array(z.object({ workspaceId: z.string(), groupIds: z.array(z.string()) })),
  balance: creditAmount,
});

export const myParticipantSchema = z.object({
  ...agentFields,
  self: z.boolean(),
  earned: creditAmount,
  settledEarnings: creditAmount,
  openEarnings: creditAmount,
  totalTrades: count,
  lastTradeAt: nullableInstant,
  earnedAsOf: instant,
});

export const workspaceParticipantSchema = z.object({
  ...agentFields,
  realizedPnl: creditAmount,
  pnlConsensus: creditAmount,
  pnlMetric: creditAmount,
  joinedWorkspaceAt: instant,
  groups: z.array(z.string()),
  role: z.string(),
});

export const removalSchema = z.object({
  ok,
  agentId: z.string(),
  creditsReturned: creditAmount,
  returnedTo: z.object({ account: z.string(), agentId: z.string().nullable() }),
  deletion: deletionSchema.describe('The deletion of its trades, positions and row, run by a job: GET deletion.statusUrl for the progress.'),
});

export const tradeRowSchema = z.object({
  id: z.string(),
  marketId: z.string(),
  metricName: z.string(),
  targetDate: z.string(),
  proposalId: z.string().nullable(),
  branch: z.string().nullable(),
  direction: z.string().nullable().describe('null on a redemption of matched pairs.'),
  kind: z.string(),
  shares: creditAmount,
  cost: creditAmount.describe('Signed: positive for buys, negative for sells.'),
  marketStatus: z.string(),
  createdAt: instant,
});

export const positionSchema = z.object({
  workspaceId: z.string(),
  marketId: z.string(),
  proposalId: z.string().nullable(),
  branch: branch.nullable(),
  metricName: z.string(),
  targetDate: z.string(),
  direction: direction.nullable(),
  shares: creditAmount,
  totalCost: creditAmount,
  worth: creditAmount.describe('The holding at the consensus (shares x the probability of their side) while live; the payout once settled.'),
  profit: creditAmount.describe('worth - totalCost.'),
  sellValue: creditAmount.describe('What selling every share now would return (down the price curve: at most worth); the payout once settled; 0 on an unfunded book.'),
  sellProfit: creditAmount.describe('sellValue - totalCost: the profit if sold now.'),
  status: marketStatus,
  probabilityHigher: z.number().nullable(),
  consensus: z.number().nullable(),
  actualValue: z.number().nullable(),
});

export const marketPnlSchema = z.object({
  marketId: z.string(),
  metricName: z.string(),
  targetDate: z.string(),
  open: z.boolean(),
  netCash: creditAmount,
  markValueConsensus: creditAmount,
  metricPayoutValue: creditAmount.nullable(),
  pnlConsensus: creditAmount,
  pnlMetric: creditAmount.nullable(),
});

export const dashboardSchema = z.object({
  balance: creditAmount,
  markets: z.array(marketSummarySchema.extend({ metricName: z.string(), liquidity: creditAmount, tradeCount: count })),
});

export const keyRowSchema = z.object({
  keyId: z.string(),
  label: z.string(),
  scopes: z.array(z.string()),
  workspaceId: z.string().nullable(),
  workspaceLocked: z.boolean(),
  createdAt: instant,
  lastUsedAt: nullableInstant,
  hashPrefix: z.string(),
});

export const mintedKeySchema = z.object({
  keyId: z.string(),
  apiKey: z.string().describe('Shown once.'),
  scopes: z.array(z.string()),
  label: z.string(),
  workspaceId: z.string().nullable(),
  workspaceLocked: z.boolean(),
  createdAt: instant,
});

const workspaceRef = z.object({ id: z.string(), name: z.string(), slug: z.string() });

export const onboardSchema = z.object({
  participantId: z.string(),
  nickname: z.string(),
  apiKey: z.string(),
  keyId: z.string(),
  scopes: z.array(z.string()),
  credits: creditAmount,
  creditsAfterClaim: creditAmount,
  workspace: z.object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    ownerHandle: z.string(),
    visibility: z.string(),
    template: z.string(),
    metricsCreated: count,
    starterProposalId: z.string().nullable(),
  }),
  claimToken: z.string(),
  claimUrl: z.string(),
});

export const claimInfoSchema = z.object({ participantId: z.string(), nickname: z.string(), workspaces: z.array(workspaceRef) });
export const claimSchema = z.object({ ok: z.boolean(), participantId: z.string(), creditsToppedUp: creditAmount, workspaces: z.array(workspaceRef) });
export const waitlistSchema = z.object({ ok, email: z.string() });

/** PATCH /agents/{id}/keys/{keyId}: the fields that changed. */
export const keyEditSchema = z.object({
  ok,
  keyId: z.string(),
  label: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  workspaceLocked: z.boolean().optional(),
});

/** presentTemplate (presenters/participant.ts). */
export const templateSchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  metrics: z.array(z.object({ name: z.string(), description: z.string(), value: z.number(), formula: z.string().nullable(), marketRangeMax: z.number() })),
  starterProposal: z.object({ title: z.string(), description: z.string(), expects: z.array(z.string()) }).nullable(),
});

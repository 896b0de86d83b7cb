import { z } from 'zod';
import { policies } from '../../services/access';
import {
  addComment,
  createProposal,
  decideProposal,
  commentsOfProposal,
  proposalInWorkspace,
  proposalsOfWorkspace,
  PROPOSAL_STATUSES,
  type Decision,
} from '../../services/proposals';
import { parseInstant } from '../../services/metrics';
import { scorecardOfWorkspace } from '../../services/proposals';
import { presentComment, presentProposal, presentWorkspaceScorecard } from '../presenters/proposal';
import { commentSchema, proposalSchema, workspaceScorecardSchema } from '../schemas/proposals';
import { openingCost, openingQuote } from '../schemas/funding';
import { presentOpeningCost } from '../presenters/funding';
import { defineRoute, type Call } from '../registry';
import { idempotencyKey } from '../idempotency';
import { credits, limitQuery } from '../schemas/common';

const proposalIdParam = z.object({ id: z.string().uuid('must be a proposal id (UUID)') });
const offsetQuery = z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must not be negative').max(1_000_000, 'is too large').default(0);
const INSTANT_HINT = 'must be an ISO 8601 instant such as 2026-01-31T12:00:00Z';
const instant = z.string({ error: INSTANT_HINT }).transform((s, ctx) => {
  const d = parseInstant(s);
  if (!d) ctx.addIssue({ code: 'custom', message: INSTANT_HINT });
  return d ?? z.NEVER;
});

/** Required text, trimmed, 1 to `max` characters. */
const requiredText = (max: number) =>
  z
    .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
    .trim()
    .min(1, 'must not be blank')
    .max(max, `must be at most ${max} characters`);

/** The Proposal JSON as the caller may see it. */
async function presentOne(c: Call<unknown, unknown, { id: string }>) {
  const access = c.workspace();
  return presentProposal(await proposalInWorkspace(c.deps, access.workspace.id, c.params.id, access.policy), c.deps.clock.now(), access.metricReadable);
}

export const postProposals = defineRoute({
  method: 'POST',
  path: '/proposals',
  idempotent: true,
  response: z.union([proposalSchema.extend(openingCost).meta({ id: 'CreatedProposal' }), z.object({ ...openingQuote, title: z.string() }).meta({ id: 'ProposalQuote' })]),
  errors: ['external_proposals_disabled', 'insufficient_balance', 'not_found', 'conflict', 'idempotency_key_reuse'],
  auth: policies.proposals.create,
  summary:
    'Propose an action: { title, description?, metricIds? (expected to move; listed first), liquidity? (credits per branch, default the workspace default), deadline? (ISO instant) }. Opens an approved and a declined book for every leaf metric; the proposer funds them. Returns the Proposal with subsidySpent, books (cost per book, who paid) and unfundedBooks. dryRun (query ?dryRun=true or body dryRun: true) answers what it would cost, whether the proposer\'s balance covers it and, when it would not create, the refusal the real call answers (refusal), and writes nothing. Idempotency-Key header (the books are paid for): a retry with the key answers the first outcome. A proposer who cannot fund every book is refused (400 insufficient_balance, nothing created); books the owner subsidises open unfunded when the owner cannot pay, as a metric\'s do. Free creation is bounded (except for the workspace owner and the master key): RATE_LIMIT_PROPOSALS_PER_HOUR proposals per participant per hour (429 rate_limited with Retry-After), and at most FREE_BOOKS_PER_PARTICIPANT unfunded open books from a participant\'s proposals in a workspace (409 conflict).',
  body: z.object({
    title: requiredText(200),
    description: z.string({ error: 'must be a string' }).max(10_000, 'must be at most 10000 characters').optional(),
    metricIds: z.array(z.string({ error: 'must be metric ids' }).max(100), { error: 'must be an array of metric ids' }).max(100, 'must list at most 100 metrics').optional(),
    liquidity: credits.optional(),
    deadline: instant.optional(),
    dryRun: z.boolean({ error: 'must be true or false' }).optional(),
  }),
  query: z.object({ dryRun: z.enum(['true', 'false'], { error: 'must be true or false' }).optional() }),
  handler: async (c) => {
    const caller = c.identity();
    const access = c.workspace();
    const { dryRun: bodyDryRun, ...input } = c.body;
    const dryRun = bodyDryRun === true || c.query.dryRun === 'true';
    const r = await createProposal(
      c.deps,
      access.workspace,
      { agentId: caller.agentId, canManage: access.caps.has('manage'), metricReadable: access.metricReadable, exempt: caller.isMaster || access.workspace.ownerId === caller.agentId },
      input,
      { dryRun, idempotencyKey: idempotencyKey(c) },
    );
    if (dryRun) return { ...presentOpeningCost(r, { planned: r.planned, payerId: caller.agentId, balance: r.balanceBefore, refusal: r.refusal }), title: input.title };
    return { ...presentProposal(await proposalInWorkspace(c.deps, access.workspace.id, r.id), c.deps.clock.now(), access.metricReadable), ...presentOpeningCost(r) };
  },
});

export const getProposals = defineRoute({
  method: 'GET',
  path: '/proposals',
  response: z.array(proposalSchema),
  errors: [],
  auth: policies.proposals.list,
  summary:
    'Proposals with their conditional markets and impact. Query status (pending|approved|declined|withdrawn), sort (created: newest first, default; impact: largest |headline impact| first, nulls last), limit (1 to 200, default 50), offset. X-Total-Count carries the number matching.',
  query: z.object({
    status: z.enum(PROPOSAL_STATUSES as [string, ...string[]], { error: 'must be pending, approved, declined or withdrawn' }).optional(),
    sort: z.enum(['created', 'impact'], { error: 'must be created or impact' }).default('created'),
    limit: limitQuery(50, 200),
    offset: offsetQuery,
  }),
  handler: async (c) => {
    const access = c.workspace();
    const page = await proposalsOfWorkspace(c.deps, access.workspace.id, c.query as Parameters<typeof proposalsOfWorkspace>[2], access.policy);
    c.koa.set('X-Total-Count', String(page.total));
    const now = c.deps.clock.now();
    return page.items.map((v) => presentProposal(v, now, access.metricReadable));
  },
});

export const getProposalsScorecard = defineRoute({
  method: 'GET',
  path: '/proposals/scorecard',
  response: workspaceScorecardSchema,
  errors: [],
  auth: policies.proposals.readScorecard,
  summary:
    'Decision scorecard of the workspace: for resolved branch books, how often the branch taken predicted the realised value within tolerance (a fraction of the range) and how far off, overall and by decision; entries newest first. Query limit (default 50, max 200), offset.',
  query: z.object({ limit: limitQuery(50, 200), offset: offsetQuery }),
  handler: async (c) => {
    const access = c.workspace();
    return presentWorkspaceScorecard(access.workspace.id, await scorecardOfWorkspace(c.deps, access.workspace.id, c.query, access.policy));
  },
});

export const getProposalsById = defineRoute({
  method: 'GET',
  path: '/proposals/:id',
  response: proposalSchema,
  errors: ['not_found'],
  auth: policies.proposals.read,
  summary: 'One Proposal including its conditional markets, impact per metric and date, and scorecard.',
  params: proposalIdParam,
  handler: presentOne,
});

function decisionRoute(decision: Decision) {
  return async (c: Call<{ spam?: boolean } | undefined, unknown, { id: string }>) => {
    const caller = c.identity();
    const access = c.workspace();
    await decideProposal(c.deps, access.workspace.id, c.params.id, {
      decision,
      spam: c.body?.spam === true,
      agentId: caller.agentId,
      canManage: access.caps.has('manage'),
    });
    return presentOne(c);
  };
}

export const postProposalsByIdApprove = defineRoute({
  method: 'POST',
  path: '/proposals/:id/approve',
  response: proposalSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.proposals.approve,
  summary: 'Approve a pending proposal: the declined branch is voided and refunded; the approved branch closes to trading and resolves at its date. 409 once decided.',
  params: proposalIdParam,
  handler: decisionRoute('approve'),
});

export const postProposalsByIdDecline = defineRoute({
  method: 'POST',
  path: '/proposals/:id/decline',
  response: proposalSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.proposals.decline,
  summary:
    'Decline a pending proposal: the approved branch is voided and refunded; the declined branch closes to trading and resolves at its date. Body { spam: true } voids both branches. 409 once decided.',
  params: proposalIdParam,
  body: z.object({ spam: z.boolean({ error: 'must be true or false' }).optional() }),
  handler: decisionRoute('decline'),
});

export const postProposalsByIdWithdraw = defineRoute({
  method: 'POST',
  path: '/proposals/:id/withdraw',
  response: proposalSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.proposals.withdraw,
  summary: 'Withdraw a pending proposal (the proposer, or a holder of manage): both branches are voided and refunded. 409 once decided.',
  params: proposalIdParam,
  handler: decisionRoute('withdraw'),
});

export const postProposalsByIdComments = defineRoute({
  method: 'POST',
  path: '/proposals/:id/comments',
  response: commentSchema,
  successStatus: 201,
  errors: ['not_found', 'proposal_closed'],
  auth: policies.proposals.comment,
  summary: 'Comment on a proposal: { body (1 to 5000 characters), parentId? (a comment to reply to) }. Returns the comment.',
  params: proposalIdParam,
  body: z.object({
    body: requiredText(5000),
    parentId: z.string().uuid('must be a comment id (UUID)').optional(),
  }),
  handler: async (c) => {
    const caller = c.identity();
    const comment = await addComment(c.deps, c.workspace().workspace.id, c.params.id, caller.agentId, c.body);
    c.status(201);
    return presentComment(comment);
  },
});

export const getProposalsByIdComments = defineRoute({
  method: 'GET',
  path: '/proposals/:id/comments',
  response: z.array(commentSchema),
  errors: ['not_found'],
  auth: policies.proposals.readComments,
  summary: 'The discussion of a proposal, oldest first (newest last). Query limit (default 100, max 500), offset. X-Total-Count carries the total.',
  params: proposalIdParam,
  query: z.object({ limit: limitQuery(100, 500), offset: offsetQuery }),
  handler: async (c) => {
    const page = await commentsOfProposal(c.deps, c.workspace().workspace.id, c.params.id, c.query, c.workspace().policy);
    c.koa.set('X-Total-Count', String(page.total));
    return page.items.map(presentComment);
  },
});

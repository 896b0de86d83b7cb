import { z } from 'zod';
import { DomainError } from '../../errors';
import { policies } from '../../services/access';
import { claimParticipant, claimTokenInfo, joinWaitlist, onboardParticipant } from '../../services/participants';
import { limitByAddress } from '../middleware/rateLimit';
import { claimInfoSchema, claimSchema, onboardSchema, templateSchema, waitlistSchema } from '../schemas/participants';
import { defineRoute, parseWith } from '../registry';
import { nickname } from '../schemas/common';
import { presentClaim, presentOnboarded, presentTemplate } from '../presenters/participant';
import { TEMPLATES } from '../../services/templates';

const onboardBody = z.strictObject({
  workspace: z.strictObject({
    name: z.string().trim().min(1, 'is required').max(120),
    template: z.string().min(1).max(64).optional(),
    templateParams: z.record(z.string(), z.unknown()).optional(),
    visibility: z.enum(['public', 'private'], { error: 'must be public or private' }).optional(),
  }),
  agentId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$/, 'must be 3 to 64 characters of letters, digits, _ or -').optional(),
  nickname: nickname.optional(),
  bio: z.string().max(500, 'must be at most 500 characters').optional(),
});
const tokenSchema = z.string().min(1).max(200);

export const postOnboard = defineRoute({
  method: 'POST',
  path: '/onboard',
  response: onboardSchema,
  successStatus: 201,
  errors: ['onboarding_paused', 'nickname_taken', 'conflict'],
  auth: policies.onboarding.onboard,
  body: onboardBody,
  bodyParsedByHandler: true,
  summary:
    'Key-first onboarding. While paused: always 403 onboarding_paused with { waitlist }. When open: body { workspace: { name, template? (blank, startup-kpis, personal-goals, open-source-health: GET /onboard/templates), templateParams? ({ values: { <metric name>: number }, starterProposal: boolean }), visibility? }, agentId?, nickname?, bio? }; 201 { participantId, nickname, apiKey, keyId, scopes, credits, creditsAfterClaim, workspace { id, name, slug, ownerHandle, visibility, template, metricsCreated, starterProposalId }, claimUrl }. Rate-limited per client address together with registration.',
  handler: async (c) => {
    const cfg = c.deps.config;
    // Checked before the body is read: a paused instance answers 403 whatever was sent.
    if (!cfg.ONBOARDING_OPEN) throw new DomainError('onboarding_paused', 'Onboarding is paused; join the waitlist.', { waitlist: cfg.WAITLIST_URL });
    const body = parseWith(onboardBody, c.body, 'body');
    await limitByAddress(c.deps, c.koa, 'signup');
    c.status(201);
    return presentOnboarded(await onboardParticipant(c.deps, body));
  },
});

export const getOnboardClaimByToken = defineRoute({
  method: 'GET',
  path: '/onboard/claim/:token',
  response: claimInfoSchema,
  errors: ['not_found'],
  auth: policies.onboarding.readClaim,
  summary: 'Who a claim token claims: { participantId, nickname, workspaces: [{ id, name, slug }] }; 404 for an unknown or used token.',
  params: z.object({ token: tokenSchema }),
  handler: async (c) => claimTokenInfo(c.deps, c.params.token),
});

export const postOnboardClaim = defineRoute({
  method: 'POST',
  path: '/onboard/claim',
  response: claimSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.onboarding.claim,
  summary:
    'Claim an onboarded participant { token } with a browser session: the account attaches it and becomes it (its agent keys and the session are then one identity), topped up to the full signup grant; the token is consumed. The account must have no active participant of its own (409): the untouched one sign-up made gives way. Returns { ok, participantId, creditsToppedUp, workspaces }.',
  body: z.strictObject({ token: tokenSchema }),
  handler: async (c) => presentClaim(await claimParticipant(c.deps, c.identity(), c.body.token)),
});

export const postWaitlist = defineRoute({
  method: 'POST',
  path: '/waitlist',
  response: waitlistSchema,
  successStatus: 201,
  errors: ['conflict'],
  auth: policies.onboarding.waitlist,
  summary: 'Join the waitlist { email }: 201, or 409 when the address is already registered.',
  body: z.strictObject({ email: z.email({ error: 'must be an email address' }).max(320) }),
  handler: async (c) => {
    await limitByAddress(c.deps, c.koa, 'waitlist');
    c.status(201);
    return joinWaitlist(c.deps, c.body.email.trim());
  },
});

export const getOnboardTemplates = defineRoute({
  method: 'GET',
  path: '/onboard/templates',
  response: z.array(templateSchema),
  errors: [],
  auth: policies.onboarding.readTemplates,
  summary: 'The workspace templates POST /onboard takes: { id, title, description, metrics: [{ name, description, value, formula }], starterProposal: { title, expects } | null }.',
  handler: async () => TEMPLATES.map(presentTemplate),
});

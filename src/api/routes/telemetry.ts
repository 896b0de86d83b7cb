import { z } from 'zod';
import { toNano } from '../../domain/money';
import { policies } from '../../services/access';
import {
  agentTelemetry,
  DECISION_OUTCOMES,
  decisionsOf,
  HEARTBEAT_STATUSES,
  heartbeatsOf,
  MAX_REASONING,
  recordDecisions,
  recordHeartbeat,
} from '../../services/telemetry';
import { DomainError } from '../../errors';
import { isWorkspaceMember } from '../../services/workspaces';
import { presentAgentTelemetry, presentDecision, presentHeartbeat } from '../presenters/telemetry';
import { defineRoute, type Call } from '../registry';
import { credits, flag, limitQuery } from '../schemas/common';
import { agentTelemetrySchema, decisionSchema, heartbeatSchema } from '../schemas/telemetry';

const at = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 instant such as 2026-01-31T12:00:00Z' });
const before = z.string().regex(/^\d{1,18}$/, 'must be a row id of the previous page').optional();
const agentParam = z.object({ agentId: z.string().min(1).max(200) });

export const postTelemetryHeartbeat = defineRoute({
  method: 'POST',
  path: '/telemetry/heartbeat',
  auth: policies.telemetry.heartbeat,
  successStatus: 201,
  response: heartbeatSchema,
  errors: [],
  summary: `An agent's heartbeat in this workspace: { status (${HEARTBEAT_STATUSES.join('|')}), lastCycleAt?, nextCycleAt? (ISO instants; an agent with no heartbeat since its nextCycleAt is listed as silent), lastCycleOutcome? (at most 500 characters), balance? (credits, as the agent sees it) }. 201 with the stored heartbeat.`,
  body: z.object({
    status: z.enum(HEARTBEAT_STATUSES, { error: `must be one of ${HEARTBEAT_STATUSES.join(', ')}` }),
    lastCycleAt: at.nullable().optional(),
    nextCycleAt: at.nullable().optional(),
    lastCycleOutcome: z.string().max(500, 'must be at most 500 characters').nullable().optional(),
    balance: credits.nullable().optional(),
  }),
  handler: async (c) => {
    const b = c.body;
    const row = await recordHeartbeat(c.deps, {
      workspaceId: c.workspace().workspace.id,
      agentId: c.identity().agentId,
      status: b.status,
      lastCycleAt: b.lastCycleAt ? new Date(b.lastCycleAt) : null,
      nextCycleAt: b.nextCycleAt ? new Date(b.nextCycleAt) : null,
      lastCycleOutcome: b.lastCycleOutcome ?? null,
      balance: b.balance === undefined || b.balance === null ? null : toNano(b.balance),
    });
    c.status(201);
    return presentHeartbeat(row);
  },
});

export const postTelemetryDecisions = defineRoute({
  method: 'POST',
  path: '/telemetry/decisions',
  auth: policies.telemetry.reportDecisions,
  successStatus: 201,
  response: z.object({ decisions: z.array(decisionSchema) }),
  errors: ['market_not_found'],
  summary: `Decision traces of one cycle: { decisions: [{ marketId, outcome (${DECISION_OUTCOMES.join('|')}), reasoning (at most ${MAX_REASONING} characters), tradeId? (one of your trades on that market) }] } (1 to 100). All or none: an unknown market is 404 market_not_found, a tradeId that is not yours on that market 400. 201 with the stored traces.`,
  body: z.object({
    decisions: z
      .array(
        z.object({
          marketId: z.uuid('must be a market id (a UUID)'),
          outcome: z.enum(DECISION_OUTCOMES, { error: `must be one of ${DECISION_OUTCOMES.join(', ')}` }),
          reasoning: z.string({ error: 'is required' }).trim().min(1, 'must not be blank: say why in a sentence').max(MAX_REASONING, `must be at most ${MAX_REASONING} characters`),
          tradeId: z.uuid('must be a trade id (a UUID)').optional(),
        }),
      )
      .min(1, 'must hold at least one decision')
      .max(100, 'must hold at most 100 decisions'),
  }),
  handler: async (c) => {
    const rows = await recordDecisions(c.deps, {
      workspaceId: c.workspace().workspace.id,
      agentId: c.identity().agentId,
      decisions: c.body.decisions.map((d) => ({ marketId: d.marketId, outcome: d.outcome, reasoning: d.reasoning, tradeId: d.tradeId ?? null })),
    });
    c.status(201);
    return { decisions: rows.map(presentDecision) };
  },
});

export const getTelemetryAgents = defineRoute({
  method: 'GET',
  path: '/telemetry/agents',
  auth: policies.telemetry.listAgents,
  response: z.array(agentTelemetrySchema),
  errors: [],
  summary: "Every agent that pushed a heartbeat in this workspace, with its latest heartbeat and whether it is silent (no heartbeat since its own nextCycleAt); silent ones first, longest overdue first. Query silent=1 keeps the silent ones (same as GET /telemetry/silent).",
  query: z.object({ silent: flag }),
  handler: async (c) => (await agentTelemetry(c.deps, { workspaceId: c.workspace().workspace.id, silentOnly: c.query.silent ?? false })).map(presentAgentTelemetry),
});

export const getTelemetrySilent = defineRoute({
  method: 'GET',
  path: '/telemetry/silent',
  auth: policies.telemetry.readSilent,
  response: z.array(agentTelemetrySchema),
  errors: [],
  summary: 'Silent agents: those with no heartbeat since their own nextCycleAt, longest overdue first, with their latest heartbeat.',
  handler: async (c) => (await agentTelemetry(c.deps, { workspaceId: c.workspace().workspace.id, silentOnly: true })).map(presentAgentTelemetry),
});

export const getTelemetryAgentsByAgentIdHeartbeats = defineRoute({
  method: 'GET',
  path: '/telemetry/agents/:agentId/heartbeats',
  auth: policies.telemetry.readHeartbeats,
  response: z.array(heartbeatSchema),
  errors: ['not_found'],
  summary: "One agent's heartbeats in this workspace, newest first. Query limit (default 50, max 500), before (id of the previous page's last row).",
  params: agentParam,
  query: z.object({ limit: limitQuery(50, 500), before }),
  handler: async (c) =>
    (await heartbeatsOf(c.deps, { workspaceId: c.workspace().workspace.id, agentId: await memberHere(c), limit: c.query.limit, before: c.query.before })).map(presentHeartbeat),
});

/** A participant outside this workspace is not found here (its telemetry elsewhere is none of this workspace's business). */
async function memberHere(c: Call<unknown, unknown, { agentId: string }>): Promise<string> {
  const ws = c.workspace().workspace;
  if (ws.ownerId !== c.params.agentId && !(await isWorkspaceMember(c.deps, ws.id, c.params.agentId))) {
    throw new DomainError('not_found', `No participant "${c.params.agentId}" belongs to this workspace.`);
  }
  return c.params.agentId;
}

const decisionQuery = z.object({
  limit: limitQuery(50, 500),
  before,
  marketId: z.uuid('must be a market id (a UUID)').optional(),
  outcome: z.enum(DECISION_OUTCOMES, { error: `must be one of ${DECISION_OUTCOMES.join(', ')}` }).optional(),
});

export const getTelemetryAgentsByAgentIdDecisions = defineRoute({
  method: 'GET',
  path: '/telemetry/agents/:agentId/decisions',
  auth: policies.telemetry.readDecisions,
  response: z.array(decisionSchema),
  errors: ['not_found'],
  summary: "One agent's decision traces in this workspace, newest first. Query limit (default 50, max 500), before, marketId, outcome.",
  params: agentParam,
  query: decisionQuery,
  handler: async (c) => (await decisionsOf(c.deps, { workspaceId: c.workspace().workspace.id, ...c.query, agentId: await memberHere(c) })).map(presentDecision),
});

export const getTelemetryDecisions = defineRoute({
  method: 'GET',
  path: '/telemetry/decisions',
  auth: policies.telemetry.listDecisions,
  response: z.array(decisionSchema),
  errors: [],
  summary: "Every agent's decision traces in this workspace, newest first. Query limit (default 50, max 500), before, agentId, marketId, outcome.",
  query: decisionQuery.extend({ agentId: z.string().min(1).max(200).optional() }),
  handler: async (c) => (await decisionsOf(c.deps, { workspaceId: c.workspace().workspace.id, ...c.query })).map(presentDecision),
});

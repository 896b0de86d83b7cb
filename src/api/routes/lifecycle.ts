import { z } from 'zod';
import { DomainError } from '../../errors';
import { policies } from '../../services/access';
import { refreshNow, resolveDueNow } from '../../services/lifecycle';
import { metricInWorkspace, settleMetric } from '../../services/metrics';
import { refreshSchema, resolveSchema, settleSchema } from '../schemas/metrics';
import { defineRoute } from '../registry';
import { presentSettlement } from '../presenters/metric';
import { refreshFunding } from '../schemas/funding';
import { presentRefresh } from '../presenters/funding';

export const postMetricsByIdSettle = defineRoute({
  method: 'POST',
  path: '/metrics/:id/settle',
  response: settleSchema,
  errors: ['not_found', 'conflict'],
  auth: policies.markets.settleMetric,
  summary:
    'Settle early: { value (clamped to each book), reason (required), asOf? (at most 1 minute ahead; default now) }. Files the reading and settles every open book of the metric, whatever its date. Returns { settled, count, totalPayout }.',
  params: z.object({ id: z.string().min(1).max(200) }),
  body: z.object({
    value: z.number({ error: 'must be a number' }).min(0, 'must not be negative: a negative value cannot resolve a market'),
    reason: z.string({ error: 'is required' }).trim().min(1, 'is required: say why the metric settles early').max(500),
    asOf: z.string().datetime({ offset: true, error: 'must be an ISO instant' }).optional(),
  }),
  handler: async (c) => {
    const ws = c.workspace().workspace;
    const now = c.deps.clock.now();
    const asOf = c.body.asOf ? new Date(c.body.asOf) : now;
    if (asOf.getTime() > now.getTime() + 60_000) throw new DomainError('validation_failed', 'asOf may be at most one minute ahead of now.');
    const r = await settleMetric(c.deps, { workspaceId: ws.id, metric: c.params.id, value: c.body.value, reason: c.body.reason, asOf, agentId: c.identity().agentId });
    return presentSettlement(r);
  },
});

export const postPredictionsMarketsRefresh = defineRoute({
  method: 'POST',
  path: '/predictions/markets/refresh',
  response: refreshSchema.extend(refreshFunding),
  errors: ['refresh_pending', 'rate_limited', 'not_found'],
  auth: policies.markets.refresh,
  summary:
    "Run the horizon pass for this workspace now: open missing books, retire stale dates; then the workspace owner funds the unfunded baseline books it can pay for (funded, fundedCount; the rest in unfunded with reason and needed). Body { force?: true, metricId? }. Without force it runs at most once a minute per workspace (429 rate_limited with Retry-After); minute floors call it every minute with force, which always runs.",
  body: z.object({ force: z.boolean().optional(), metricId: z.string().uuid().optional() }),
  handler: async (c) => {
    const access = c.workspace();
    // A metric of another workspace (or one hidden from the caller) is not found here, as everywhere.
    if (c.body.metricId && (!(await metricInWorkspace(c.deps, access.workspace.id, c.body.metricId)) || !access.metricReadable(c.body.metricId))) {
      throw new DomainError('not_found', `No metric "${c.body.metricId}" exists in this workspace.`);
    }
    const summary = await refreshNow(c.deps, { workspaceId: access.workspace.id, metricId: c.body.metricId }, { force: c.body.force });
    if (!summary) throw new DomainError('refresh_pending', 'The horizon pass is queued but did not finish in time; it still runs.');
    return presentRefresh(summary);
  },
});

export const postPredictionsResolve = defineRoute({
  method: 'POST',
  path: '/predictions/resolve',
  response: resolveSchema,
  errors: [],
  auth: policies.markets.resolve,
  summary: "Resolve this workspace's due books now (minute floors call it once a minute): each on its lane, by the last reading inside its period.",
  body: z.object({}).optional(),
  handler: async (c) => {
    const r = await resolveDueNow(c.deps, c.workspace().workspace.id);
    return { ok: true, ...r };
  },
});

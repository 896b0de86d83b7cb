import { z } from 'zod';
import { health } from '../../services/health';
import { policies } from '../../services/access';
import { workspaceStatus } from '../../services/metrics';
import { presentMarketSummary } from '../presenters/market';
import { presentStatusMetric } from '../presenters/metric';
import { statusSchema } from '../schemas/metrics';
import { defineRoute } from '../registry';
import { flag, limitQuery } from '../schemas/common';

export const getStatus = defineRoute({
  method: 'GET',
  path: '/status',
  response: statusSchema,
  errors: [],
  auth: policies.status.readStatus,
  summary:
    'Status summary: { ok, creditValueUsd, metrics: [{ id, name, description, value, total }] }. Query trends=1 adds trend [unixTs, value] pairs (trendsLimit, default 20, max 90); markets=1 adds open baseline markets per metric.',
  query: z.object({ trends: flag, trendsLimit: limitQuery(20, 90), markets: flag }),
  handler: async (c) => {
    const ws = c.workspace().workspace;
    const rows = await workspaceStatus(c.deps, ws.id, {
      trends: c.query.trends ?? false,
      trendsLimit: c.query.trendsLimit,
      markets: c.query.markets ?? false,
    });
    return {
      ok: true,
      creditValueUsd: c.deps.config.CREDIT_VALUE_USD,
      workspace: { id: ws.id, slug: ws.slug, name: ws.name, description: ws.description },
      // Per-metric read permissions hide a metric (and its books) from this caller.
      metrics: rows.filter((r) => c.workspace().metricReadable(r.metric.id)).map((r) => ({
        ...presentStatusMetric(r.metric),
        ...(r.trend ? { trend: r.trend } : {}),
        ...(r.markets ? { markets: r.markets.map(presentMarketSummary) } : {}),
      })),
    };
  },
});

const check = z.object({ ok: z.boolean(), ms: z.number(), error: z.string().optional() });

export const getHealth = defineRoute({
  method: 'GET',
  path: '/health',
  response: z.object({ status: z.literal('ok'), postgres: check, queues: check.extend({ backend: z.enum(['redis', 'postgres']) }) }),
  errors: ['service_unavailable'],
  auth: policies.status.readHealth,
  // Readiness is the primary's: a load balancer must not route writes to a process whose primary is away.
  readsPrimary: true,
  summary:
    'Liveness and readiness, without credentials (for load balancers and compose health checks): 200 { status: "ok", postgres, queues } when Postgres and the queue backend each answer within 2 s; else 503 service_unavailable carrying the same checks.',
  handler: async (c) => health(c.deps),
});

import { z } from 'zod';
import { workspaceStatus } from '../../services/metrics';
import { auth } from '../auth';
import { presentMarketSummary } from '../presenters/market';
import { presentStatusMetric } from '../presenters/metric';
import { statusSchema } from '../schemas/metrics';
import { defineRoute } from '../registry';
import { flag, limitQuery } from '../schemas/common';

defineRoute({
  method: 'GET',
  path: '/status',
  response: statusSchema,
  errors: [],
  auth: auth.publicRead(),
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
      workspace: { id: ws.id, slug: ws.slug, name: ws.name },
      // Per-metric read permissions hide a metric (and its books) from this caller.
      metrics: rows.filter((r) => c.workspace().metricReadable(r.metric.id)).map((r) => ({
        ...presentStatusMetric(r.metric),
        ...(r.trend ? { trend: r.trend } : {}),
        ...(r.markets ? { markets: r.markets.map(presentMarketSummary) } : {}),
      })),
    };
  },
});

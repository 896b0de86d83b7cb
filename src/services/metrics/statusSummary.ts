/** GET /status: every metric, with trends and open baseline books when asked. */
import type { Deps } from '../../deps';
import { openBaselineBooksByMetric } from '../lifecycle';
import { type MarketRow } from '../books';
import { trendsFor } from './readings';
import { metricsOfWorkspace, type MetricRow } from './metricRows';

export interface StatusMetric {
  metric: MetricRow;
  trend?: Array<[number, number]>;
  markets?: MarketRow[];
}

/** GET /status: every metric, with trends and open baseline books when asked. */
export async function workspaceStatus(
  deps: Deps,
  workspaceId: string,
  opts: { trends: boolean; trendsLimit: number; markets: boolean },
): Promise<StatusMetric[]> {
  const now = deps.clock.now();
  const metrics = await metricsOfWorkspace(deps, workspaceId);
  const trends = opts.trends ? await trendsFor(deps.ds, workspaceId, opts.trendsLimit, now) : null;
  const markets = opts.markets ? await openBaselineBooksByMetric(deps.ds.manager, workspaceId, metrics.map((x) => x.id)) : null;
  return metrics.map((metric) => ({
    metric,
    ...(trends ? { trend: trends.get(metric.id) ?? [] } : {}),
    ...(opts.markets ? { markets: markets?.get(metric.id) ?? [] } : {}),
  }));
}

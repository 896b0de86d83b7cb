/** GET /status: every metric, with trends and open baseline books when asked. */
import type { DataSource } from 'typeorm';
import { openBaselineBooksByMetric, type MarketRow } from '../markets';
import { trendsFor } from './readings';
import { listMetrics, type MetricRow } from './metricRows';

export interface StatusMetric {
  metric: MetricRow;
  trend?: Array<[number, number]>;
  markets?: MarketRow[];
}

/** GET /status: every metric, with trends and open baseline books when asked. */
export async function statusSummary(
  ds: DataSource,
  workspaceId: string,
  opts: { trends: boolean; trendsLimit: number; markets: boolean; now: Date },
): Promise<StatusMetric[]> {
  const metrics = await listMetrics(ds, workspaceId);
  const trends = opts.trends ? await trendsFor(ds, workspaceId, opts.trendsLimit, opts.now) : null;
  const markets = opts.markets ? await openBaselineBooksByMetric(ds.manager, workspaceId, metrics.map((x) => x.id)) : null;
  return metrics.map((metric) => ({
    metric,
    ...(trends ? { trend: trends.get(metric.id) ?? [] } : {}),
    ...(opts.markets ? { markets: markets?.get(metric.id) ?? [] } : {}),
  }));
}

import type { Deps } from '../../deps';
import { listUpdates } from './metricHistory';
import { getMetricRow, listMetrics } from './metricRows';
import { statusSummary } from './statusSummary';
import { listReadings } from './readings';

/** The metrics of a workspace with computed totals and depth, by depth then order. */
export async function metricsOfWorkspace(deps: Deps, workspaceId: string): ReturnType<typeof listMetrics> {
  return listMetrics(deps.ds, workspaceId);
}

/** A metric of the workspace by id, else by name (case-insensitive); null when neither matches. */
export async function metricInWorkspace(deps: Deps, workspaceId: string, idOrName: string): ReturnType<typeof getMetricRow> {
  return getMetricRow(deps.ds, workspaceId, idOrName);
}

/** A metric's readings, newest first by asOf, one keyset page; null when the metric does not exist. */
export async function readingLogOf(
  deps: Deps,
  workspaceId: string,
  idOrName: string,
  page: Parameters<typeof listReadings>[2],
): Promise<({ metricId: string } & Awaited<ReturnType<typeof listReadings>>) | null> {
  const row = await getMetricRow(deps.ds, workspaceId, idOrName);
  if (!row) return null;
  return { metricId: row.id, ...(await listReadings(deps.ds, row.id, page)) };
}

/** Value-change history of the workspace's metrics, newest first. */
export async function metricUpdates(deps: Deps, workspaceId: string, limit: number): ReturnType<typeof listUpdates> {
  return listUpdates(deps.ds, workspaceId, limit);
}

/** GET /status: every metric, with trends and open baseline books when asked. */
export async function workspaceStatus(deps: Deps, workspaceId: string, opts: { trends: boolean; trendsLimit: number; markets: boolean }): ReturnType<typeof statusSummary> {
  return statusSummary(deps.ds, workspaceId, { ...opts, now: deps.clock.now() });
}

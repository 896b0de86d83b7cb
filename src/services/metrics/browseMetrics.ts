import type { Deps } from '../../deps';
import { getMetricRow } from './metricRows';
import { listReadings } from './readings';

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

import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { liveMarketIdsOfMetric, runOnLane } from '../lifecycle';
import { updateMetric } from './editMetrics';
import { writeWorkspaceMetrics } from './metricLock';
import { getMetricRow } from './metricRows';
import { fileReading } from './readings';
import { rows } from '../../db/queryRows';

export interface SettleMetricInput {
  workspaceId: string;
  /** Metric id or name. */
  metric: string;
  value: number;
  reason: string;
  asOf: Date;
  /** Who settles (recorded on a leaf metric's update). */
  agentId: string;
}

export interface SettleMetricResult {
  metricId: string;
  settled: string[];
  count: number;
  totalPayout: bigint;
  /** Books whose settle job did not finish in time (it still runs on its lane). */
  pending: number;
}

/**
 * Settle a metric early: file the reading (a leaf metric's value moves, recalculating dependants;
 * a computed one gets a settle reading) in one transaction, then settle every live book of the
 * metric, whatever its date, on its own lane at that value.
 */
export async function settleMetric(deps: Deps, input: SettleMetricInput): Promise<SettleMetricResult> {
  const { workspaceId, value, reason, asOf } = input;
  const { metric, marketIds, readingId } = await writeWorkspaceMetrics(deps.ds, workspaceId, async (m) => {
    const metric = await getMetricRow(m, workspaceId, input.metric);
    if (!metric) throw new DomainError('not_found', `Metric "${input.metric}" was not found in this workspace.`);
    let readingId: string;
    if (metric.isLeaf) {
      await updateMetric(m, workspaceId, metric.id, { value, asOf, updateNote: `settled: ${reason}` }, { agentId: input.agentId, clock: deps.clock });
      const [r] = await rows<{ id: string }>(m, `SELECT id FROM metric_readings WHERE metric_id = $1 ORDER BY id DESC LIMIT 1`, [metric.id]);
      readingId = String(r.id);
    } else {
      readingId = String((await fileReading(m, metric.id, workspaceId, { value, asOf, kind: 'settle', note: reason }, deps.clock)).id);
    }
    return { metric, marketIds: await liveMarketIdsOfMetric(m, metric.id), readingId };
  });
  const results = await Promise.all(marketIds.map((id) => runOnLane(deps, 'settle', { marketId: id, value, reason }, id, `settle-${id}-${readingId}`)));
  const settled = results.filter((r) => r?.settled === true);
  return {
    metricId: metric.id,
    settled: settled.map((r) => r!.marketId),
    count: settled.length,
    totalPayout: settled.reduce((s, r) => s + r!.payout, 0n),
    pending: results.filter((r) => r === null).length,
  };
}

import type { Deps } from '../../deps';

export interface BookDatesQuery {
  workspaceId: string;
  metricId: string | null;
  metricName: string | null;
  /** The proposal whose branch is named; null for the baseline books. */
  proposalId: string | null;
  /** Required with proposalId, null without. */
  branch: string | null;
}

/**
 * The target dates of a metric's open books (by metric id or name), on the baseline or on one
 * proposal branch, earliest end first (2027-05 before 2027, which ends in December): what a trade naming the metric may pass as targetDate. A refusal
 * lists them so the caller can correct its request.
 */
export async function openTargetDates(deps: Deps, q: BookDatesQuery): Promise<Array<{ metricId: string; targetDate: string }>> {
  if (!q.metricId && !q.metricName) return [];
  const rows: Array<{ metric_id: string; target_date: string }> = await deps.ds.query(
    `SELECT DISTINCT mk.metric_id, mk.target_date, mk.period_end FROM markets mk JOIN metrics mt ON mt.id = mk.metric_id
      WHERE mk.workspace_id = $1 AND mk.status = 'open'
        AND ($2::text IS NULL OR mk.metric_id::text = $2) AND ($3::text IS NULL OR lower(mt.name) = lower($3))
        AND mk.proposal_id IS NOT DISTINCT FROM $4::uuid AND mk.branch IS NOT DISTINCT FROM $5::text
      ORDER BY mk.period_end NULLS LAST, mk.target_date LIMIT 100`,
    [q.workspaceId, q.metricId, q.metricName, q.proposalId, q.branch],
  );
  return rows.map((r) => ({ metricId: r.metric_id, targetDate: r.target_date }));
}

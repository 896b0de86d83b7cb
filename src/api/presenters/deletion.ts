import type { DeletionRow } from '../../services/deletions';

export function presentDeletion(d: DeletionRow) {
  return {
    id: d.id,
    kind: d.kind,
    targetId: d.targetId,
    targetName: d.targetName,
    state: d.state,
    phase: d.phase,
    phases: d.phases,
    done: d.done,
    total: d.total,
    batches: d.batches,
    longestBatchMs: d.longestBatchMs,
    error: d.error,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
    finishedAt: d.finishedAt?.toISOString() ?? null,
    statusUrl: `/api/deletions/${d.id}`,
  };
}

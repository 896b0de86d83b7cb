import type { ActionPage, ActionRow } from '../../services/dataRoom';

export function presentAction(r: ActionRow) {
  return {
    id: r.key,
    kind: r.kind,
    at: r.at.toISOString(),
    agentId: r.agentId,
    metricId: r.metricId,
    metricName: r.metricName,
    field: r.field,
    from: r.fromText,
    to: r.toText,
    oldValue: r.oldValue,
    value: r.value,
    na: r.na,
    asOf: r.asOf?.toISOString() ?? null,
    note: r.note,
    proposalId: r.proposalId,
    title: r.title,
    decision: r.decision as 'approved' | 'declined' | 'withdrawn' | null,
    spam: r.spam,
    marketId: r.marketId,
    targetDate: r.targetDate,
    branch: r.branch as 'approved' | 'declined' | null,
    settledEarly: r.settledEarly,
    reason: r.reason,
  };
}

export function presentActionPage(p: ActionPage) {
  return { actions: p.actions.map(presentAction), nextCursor: p.nextCursor };
}

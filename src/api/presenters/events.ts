import type { Switches } from '../../domain/webhooks';
import type { FeedEvent } from '../../services/events';
import type { HookDeliveryRow, HookRow } from '../../services/hooks';

export function presentEvent(e: FeedEvent) {
  return { id: e.id, type: e.type, workspaceId: e.workspaceId, timestamp: e.timestamp.toISOString(), data: e.data };
}

/** A hook as its owner sees it; the secret appears only in the answer that created or rotated it. */
export function presentHook(h: HookRow, secret?: string) {
  return {
    id: h.id,
    workspaceId: h.workspaceId,
    agentId: h.agentId,
    url: h.url,
    description: h.description,
    events: h.events as Array<{ type: string; metricNames?: string[]; metricIds?: string[] }>,
    status: h.disabledAt ? ('disabled' as const) : h.failingSince ? ('failing' as const) : ('active' as const),
    disabledAt: h.disabledAt ? h.disabledAt.toISOString() : null,
    disabledReason: h.disabledReason,
    failingSince: h.failingSince ? h.failingSince.toISOString() : null,
    nextAttemptAt: h.nextAttemptAt ? h.nextAttemptAt.toISOString() : null,
    lastEventId: h.cursorSeq,
    secretRotatingUntil: h.previousSecret && h.previousSecretUntil ? h.previousSecretUntil.toISOString() : null,
    createdAt: h.createdAt.toISOString(),
    updatedAt: h.updatedAt.toISOString(),
    ...(secret ? { secret } : {}),
  };
}

export function presentDelivery(d: HookDeliveryRow) {
  return {
    id: d.id,
    hookId: d.hookId,
    eventId: d.eventSeq,
    eventType: d.eventType,
    attempt: d.attempt,
    status: d.status as 'delivered' | 'failed' | 'gone' | 'backoff',
    httpStatus: d.httpStatus,
    latencyMs: d.latencyMs,
    response: d.response,
    error: d.error,
    manual: d.manual,
    createdAt: d.createdAt.toISOString(),
  };
}

export function presentSwitches(agentId: string, s: Switches) {
  return {
    agentId,
    notifications: {
      commentOnMyProposal: s.commentOnMyProposal,
      replyToMyComment: s.replyToMyComment,
      newProposal: s.newProposal,
      anyComment: s.anyComment,
      marketResolved: s.marketResolved,
      contractDecided: s.contractDecided,
    },
  };
}

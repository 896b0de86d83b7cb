import type { FeedbackRow } from '../../services/feedback';

export function presentFeedback(r: FeedbackRow) {
  return {
    id: r.id,
    agentId: r.agentId,
    nickname: r.nickname,
    workspaceId: r.workspaceId,
    message: r.message,
    context: r.context,
    requestId: r.requestId,
    createdAt: r.createdAt.toISOString(),
  };
}

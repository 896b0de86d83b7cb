import { toCredits } from '../../domain/money';
import type { AgentRecord } from '../../services/participants';

export function presentAgent(a: AgentRecord) {
  return {
    id: a.id,
    name: a.nickname,
    nickname: a.nickname,
    operator: a.operator,
    bio: a.bio,
    intent: a.intent,
    parent: a.parentId,
    bot: a.parentId !== null,
    unclaimed: a.unclaimed,
    balance: toCredits(a.balance),
    createdAt: a.createdAt.toISOString(),
    joinedAt: a.createdAt.toISOString(),
  };
}

export function presentBalance(a: Pick<AgentRecord, 'id' | 'balance'>) {
  return { agentId: a.id, balance: toCredits(a.balance) };
}

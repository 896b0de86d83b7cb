import { toCredits } from '../../domain/money';

export interface AgentRecord {
  id: string;
  nickname: string;
  operator: string | null;
  bio: string;
  intent: string;
  parentId: string | null;
  createdBy: string | null;
  createdAt: Date;
  balance: bigint;
  unclaimed: boolean;
}

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

import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import { createAgent, mintKey, NICKNAME_RE } from '../identity';
import { addMember, findWorkspace } from '../workspaces';
import { firstRow } from '../../db/queryRows';

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

export async function getAgent(m: DataSource | EntityManager, idOrNickname: string): Promise<AgentRecord | null> {
  const r = await firstRow<{
    id: string;
    nickname: string;
    operator: string | null;
    bio: string;
    intent: string;
    parent_id: string | null;
    created_by: string | null;
    created_at: Date;
    balance: string;
    unclaimed: boolean;
  }>(
    m,
    `SELECT a.*, coalesce(ac.balance, 0)::text AS balance FROM agents a
       LEFT JOIN accounts ac ON ac.id = 'agent:' || a.id
      WHERE a.id = $1 OR lower(a.nickname) = lower($1)
      ORDER BY (a.id = $1) DESC LIMIT 1`,
    [idOrNickname],
  );
  if (!r) return null;
  return {
    id: r.id,
    nickname: r.nickname,
    operator: r.operator,
    bio: r.bio,
    intent: r.intent,
    parentId: r.parent_id,
    createdBy: r.created_by,
    createdAt: r.created_at,
    balance: BigInt(r.balance),
    unclaimed: r.unclaimed,
  };
}

/** A participant by id or nickname (case-insensitive); null when none matches. */
export async function participantByIdOrNickname(deps: Deps, idOrNickname: string): ReturnType<typeof getAgent> {
  return getAgent(deps.ds, idOrNickname);
}

export interface RegisterInput {
  agentId?: string;
  nickname: string;
  operator?: string | null;
  bio?: string;
  source?: string | null;
  workspaceId?: string;
}

/** Public registration: 0 credits, one key with scopes ['*'], shown once. */
export async function registerParticipant(deps: Deps, input: RegisterInput) {
  if (!NICKNAME_RE.test(input.nickname)) {
    throw new DomainError('validation_failed', 'The nickname must be 3 to 30 characters of letters, digits, _ or -, starting with a letter or digit.');
  }
  return inTransaction(deps.ds, async (m) => {
    let workspaceId: string | null = null;
    if (input.workspaceId) {
      const ws = await findWorkspace(m, input.workspaceId);
      if (!ws || !ws.public) throw new DomainError('workspace_not_found', `No public workspace "${input.workspaceId}" exists to join.`);
      workspaceId = ws.id;
    }
    const id = await createAgent(m, { id: input.agentId, nickname: input.nickname, operator: input.operator, bio: input.bio, source: input.source });
    if (workspaceId) await addMember(m, workspaceId, id);
    const key = await mintKey(m, id, { scopes: ['*'], label: 'registration', workspaceId });
    return { agentId: id, apiKey: key.apiKey, keyId: key.keyId, nickname: input.nickname, bio: input.bio ?? '', operator: input.operator ?? null, scopes: key.scopes, balance: 0 };
  });
}

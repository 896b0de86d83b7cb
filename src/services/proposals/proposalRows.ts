/** Proposal rows: their statuses, id checks, and the lookups every use case shares (through the Proposal entity). */
import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { Proposal } from '../../entities/proposal';
import { DomainError } from '../../errors';

export type ProposalStatus = Proposal['status'];
export const PROPOSAL_STATUSES: readonly ProposalStatus[] = ['pending', 'approved', 'declined', 'withdrawn'];
export type Branch = 'approved' | 'declined';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(id: string): boolean {
  return UUID_RE.test(id);
}

export function proposalNotFound(id: string): DomainError {
  return new DomainError('not_found', `Proposal "${id}" was not found in this workspace.`);
}

/** Proposals with their proposer's nickname (`proposer.nickname`; the proposer is null once the agent is gone). */
function proposalsWithProposer(m: DataSource | EntityManager): SelectQueryBuilder<Proposal> {
  return m.getRepository(Proposal).createQueryBuilder('p').leftJoin('p.proposer', 'a').addSelect(['a.id', 'a.nickname']);
}

/** The proposal, with its proposer's nickname, if it is in the workspace. */
export async function findProposal(m: DataSource | EntityManager, workspaceId: string, id: string): Promise<Proposal | null> {
  if (!isUuid(id)) return null;
  return proposalsWithProposer(m).where('p.id = :id AND p.workspace_id = :workspaceId', { id, workspaceId }).getOne();
}

/** The proposal row locked FOR UPDATE (one statement), if it exists (and is in the workspace, when one is given). */
export async function lockProposal(m: EntityManager, id: string, workspaceId?: string): Promise<Proposal | null> {
  if (workspaceId !== undefined && !isUuid(id)) return null;
  return m.getRepository(Proposal).findOne({ where: { id, ...(workspaceId === undefined ? {} : { workspaceId }) }, lock: { mode: 'pessimistic_write' } });
}

/** The proposals with these ids, with their proposers' nicknames, in the order given. */
export async function proposalsByIds(m: DataSource | EntityManager, ids: string[]): Promise<Proposal[]> {
  if (!ids.length) return [];
  const rows = await proposalsWithProposer(m).where('p.id IN (:...ids)', { ids }).getMany();
  const byId = new Map(rows.map((p) => [p.id, p]));
  return ids.map((id) => byId.get(id)).filter((p): p is Proposal => !!p);
}

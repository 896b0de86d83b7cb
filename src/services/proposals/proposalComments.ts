/** The discussion of a proposal: comments and replies, through the ProposalComment entity. */
import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import type { Row } from '../../db/rows';
import { ProposalComment } from '../../entities/proposal';
import { DomainError } from '../../errors';
import { emitEvent } from '../events';
import { findProposal, proposalNotFound } from './proposalRows';

/** A comment as the API shows it: a plain row; `author` is null once the agent is gone. */
export type CommentRow = Pick<Row<ProposalComment>, 'id' | 'proposalId' | 'authorId' | 'parentId' | 'body' | 'createdAt'> & { author?: { nickname: string } | null };

/** Comments with their author's nickname (`author.nickname`; the author is null once the agent is gone). */
function commentsWithAuthor(m: DataSource | EntityManager): SelectQueryBuilder<ProposalComment> {
  return m.getRepository(ProposalComment).createQueryBuilder('c').leftJoin('c.author', 'a').addSelect(['a.id', 'a.nickname']);
}

/** A comment (optionally a reply to another comment on the same proposal), decided proposals included. */
export async function addComment(deps: Deps, workspaceId: string, proposalId: string, authorId: string, input: { body: string; parentId?: string }): Promise<CommentRow> {
  return inTransaction(deps.ds, async (m) => {
    const p = await findProposal(m, workspaceId, proposalId);
    if (!p) throw proposalNotFound(proposalId);
    const parent = input.parentId ? await m.getRepository(ProposalComment).findOne({ select: { id: true, authorId: true }, where: { id: input.parentId, proposalId: p.id } }) : null;
    if (input.parentId && !parent) {
      throw new DomainError('validation_failed', `parentId "${input.parentId}" is not a comment on this proposal.`);
    }
    const { id } = await m.save(m.create(ProposalComment, { proposalId: p.id, workspaceId, authorId, parentId: input.parentId ?? null, body: input.body, createdAt: deps.clock.now() }));
    // Who it concerns rides along, so the notification switches (commentOnMyProposal, replyToMyComment) can pick.
    await emitEvent(m, workspaceId, 'proposal:commented', {
      proposalId: p.id,
      commentId: id,
      authorId,
      parentId: parent?.id ?? null,
      proposalAuthorId: p.proposedBy,
      parentAuthorId: parent?.authorId ?? null,
    });
    return (await commentsWithAuthor(m).where('c.id = :id', { id }).getOne()) as ProposalComment;
  });
}

/** Comments oldest first (newest last), with the total. */
export async function listComments(ds: DataSource, workspaceId: string, proposalId: string, page: { limit: number; offset: number }): Promise<{ items: CommentRow[]; total: number }> {
  const p = await findProposal(ds, workspaceId, proposalId);
  if (!p) throw proposalNotFound(proposalId);
  const total = await ds.getRepository(ProposalComment).countBy({ proposalId: p.id });
  const items = await commentsWithAuthor(ds).where('c.proposal_id = :proposalId', { proposalId: p.id }).orderBy('c.seq').limit(page.limit).offset(page.offset).getMany();
  return { items, total };
}

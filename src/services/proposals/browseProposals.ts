import type { Deps } from '../../deps';
import { getProposal } from './proposalViews';
import { listProposals } from './listProposals';
import { listComments } from './proposalComments';
import { workspaceScorecard } from './scorecard';

/** One proposal with its conditional markets, impact and scorecard; 404 when it is not in the workspace. */
export async function proposalInWorkspace(deps: Deps, workspaceId: string, proposalId: string): ReturnType<typeof getProposal> {
  return getProposal(deps.ds, workspaceId, proposalId);
}

/** A page of the workspace's proposals, with the number matching. */
export async function proposalsOfWorkspace(deps: Deps, workspaceId: string, q: Parameters<typeof listProposals>[2]): ReturnType<typeof listProposals> {
  return listProposals(deps.ds, workspaceId, q);
}

/** The workspace's decision scorecard, one page of entries, newest first. */
export async function scorecardOfWorkspace(deps: Deps, workspaceId: string, page: { limit: number; offset: number }): ReturnType<typeof workspaceScorecard> {
  return workspaceScorecard(deps.ds, workspaceId, page);
}

/** The discussion of a proposal, oldest first, one page, with the total. */
export async function commentsOfProposal(deps: Deps, workspaceId: string, proposalId: string, page: { limit: number; offset: number }): ReturnType<typeof listComments> {
  return listComments(deps.ds, workspaceId, proposalId, page);
}

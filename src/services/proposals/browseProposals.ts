import type { Deps } from '../../deps';
import { proposalReadable, unreadableMetricIds, type ReadPolicy } from '../access';
import { getProposal } from './proposalViews';
import { listProposals } from './listProposals';
import { proposalNotFound } from './proposalRows';
import { listComments } from './proposalComments';
import { workspaceScorecard } from './scorecard';

/**
 * One proposal with its conditional markets, impact and scorecard; 404 when it is not in the
 * workspace, or `reader` may not see it (hidden with its metrics: services/access proposalReadable).
 */
export async function proposalInWorkspace(deps: Deps, workspaceId: string, proposalId: string, reader?: Pick<ReadPolicy, 'metric'>): ReturnType<typeof getProposal> {
  const v = await getProposal(deps.ds, workspaceId, proposalId);
  if (reader && !proposalReadable(reader, { metricIds: v.proposal.metricIds, bookMetricIds: v.markets.map((mk) => mk.metricId) })) {
    throw proposalNotFound(proposalId);
  }
  return v;
}

/** A page of the workspace's proposals `reader` may see, with the number of them matching. */
export async function proposalsOfWorkspace(deps: Deps, workspaceId: string, q: Parameters<typeof listProposals>[2], reader: ReadPolicy): ReturnType<typeof listProposals> {
  return listProposals(deps.ds, workspaceId, { ...q, hiddenMetricIds: await unreadableMetricIds(deps, reader) });
}

/** The workspace's decision scorecard as `reader` may see it (its figures leave hidden rows out), one page of entries, newest first. */
export async function scorecardOfWorkspace(deps: Deps, workspaceId: string, page: { limit: number; offset: number }, reader: ReadPolicy): ReturnType<typeof workspaceScorecard> {
  return workspaceScorecard(deps.ds, workspaceId, page, await unreadableMetricIds(deps, reader));
}

/** The discussion of a proposal `reader` may see, oldest first, one page, with the total. */
export async function commentsOfProposal(deps: Deps, workspaceId: string, proposalId: string, page: { limit: number; offset: number }, reader: ReadPolicy): ReturnType<typeof listComments> {
  await proposalInWorkspace(deps, workspaceId, proposalId, reader);
  return listComments(deps.ds, workspaceId, proposalId, page);
}

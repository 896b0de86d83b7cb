import { toCredits } from '../../domain/money';
import type { WorkspaceRow } from '../../services/workspaces';
import type { WorkspaceActivity } from '../../services/standings';

export function presentWorkspace(w: WorkspaceRow, metrics: unknown[] = []) {
  return {
    id: w.id,
    slug: w.slug,
    name: w.name,
    description: w.description,
    public: w.public,
    ownerId: w.ownerId,
    externalProposals: w.externalProposals,
    defaultLiquidityCredits: toCredits(w.defaultLiquidity),
    defaultProposalLiquidityCredits: toCredits(w.defaultProposalLiquidity),
    createdAt: w.createdAt.toISOString(),
    metrics,
  };
}

export function presentActivity(a: WorkspaceActivity) {
  return { metrics: a.metrics, openProposals: a.openProposals, openBooks: a.openBooks, volume: toCredits(a.volume), lastTradeAt: a.lastTradeAt?.toISOString() ?? null };
}

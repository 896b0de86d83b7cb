import { toCredits } from '../../domain/money';
import type { WorkspaceRow } from '../../services/workspaces';

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

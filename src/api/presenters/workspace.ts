import { toCredits } from '../../domain/money';
import type { Workspace } from '../../entities/workspace';

export function presentWorkspace(w: Workspace, metrics: unknown[] = []) {
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

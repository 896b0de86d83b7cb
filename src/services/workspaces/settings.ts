import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import { toNano } from '../../domain/money';
import { Workspace } from '../../entities/workspace';
import { findWorkspace } from './workspaces';

export interface WorkspacePatch {
  name?: string;
  description?: string;
  public?: boolean;
  externalProposals?: boolean;
  defaultLiquidityCredits?: number;
  defaultProposalLiquidityCredits?: number;
}

/** Settings that need manage_workspace (visibility, outside proposals, default liquidities); the rest need manage. */
export const OWNER_SETTINGS = ['public', 'externalProposals', 'defaultLiquidityCredits', 'defaultProposalLiquidityCredits'] as const;

/** PATCH /workspaces/{id}: fields sent replace the stored ones, in one statement. */
export async function editWorkspaceSettings(deps: Deps, workspaceId: string, p: WorkspacePatch): Promise<Workspace> {
  const changes: Partial<Workspace> = {};
  if (p.name != null) changes.name = p.name;
  if (p.description != null) changes.description = p.description;
  if (p.public != null) changes.public = p.public;
  if (p.externalProposals != null) changes.externalProposals = p.externalProposals;
  if (p.defaultLiquidityCredits != null) changes.defaultLiquidity = toNano(p.defaultLiquidityCredits);
  if (p.defaultProposalLiquidityCredits != null) changes.defaultProposalLiquidity = toNano(p.defaultProposalLiquidityCredits);
  return inTransaction(deps.ds, async (m) => {
    if (Object.keys(changes).length) await m.update(Workspace, { id: workspaceId }, changes);
    return (await findWorkspace(m, workspaceId))!;
  });
}

import type { DataSource } from 'typeorm';
import { inTransaction } from '../../db/tx';
import { toNano } from '../../domain/money';
import { refundWorkspaceBooks } from '../markets';
import { findWorkspace, type WorkspaceRow } from './workspaces';

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
export async function updateWorkspace(ds: DataSource, workspaceId: string, p: WorkspacePatch): Promise<WorkspaceRow> {
  return inTransaction(ds, async (m) => {
    await m.query(
      `UPDATE workspaces SET
         name = coalesce($2, name),
         description = coalesce($3, description),
         public = coalesce($4, public),
         external_proposals = coalesce($5, external_proposals),
         default_liquidity = coalesce($6::bigint, default_liquidity),
         default_proposal_liquidity = coalesce($7::bigint, default_proposal_liquidity)
       WHERE id = $1`,
      [
        workspaceId,
        p.name ?? null,
        p.description ?? null,
        p.public ?? null,
        p.externalProposals ?? null,
        p.defaultLiquidityCredits === undefined ? null : toNano(p.defaultLiquidityCredits).toString(),
        p.defaultProposalLiquidityCredits === undefined ? null : toNano(p.defaultProposalLiquidityCredits).toString(),
      ],
    );
    return (await findWorkspace(m, workspaceId))!;
  });
}

/**
 * DELETE /workspaces/{id}: every open book is refunded first (through the markets area), then the
 * workspace and everything scoped to it go, in one transaction. Keys that named it lose their
 * default workspace; a key locked to it is locked to nothing and refuses every workspace.
 */
export async function deleteWorkspace(ds: DataSource, workspaceId: string, now: Date): Promise<void> {
  await inTransaction(ds, async (m) => {
    await m.query(`SELECT id FROM workspaces WHERE id = $1 FOR UPDATE`, [workspaceId]);
    await refundWorkspaceBooks(m, workspaceId, now);
    await m.query(`DELETE FROM workspaces WHERE id = $1`, [workspaceId]);
  });
}

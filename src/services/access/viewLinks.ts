import { randomBytes } from 'node:crypto';
import { IsNull } from 'typeorm';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import { ViewLink } from '../../entities/access';
import { Workspace } from '../../entities/workspace';

export interface ViewLinkRecord {
  token: string;
  workspaceId: string;
  createdAt: string;
}

/**
 * GET /workspaces/{id}/view-link: the workspace's active link, or a new one. The token is stored as
 * is (it must be shown again to every manager who asks) and grants read on that one workspace only.
 */
export async function shareViewLink(deps: Deps, workspaceId: string, createdBy: string): Promise<ViewLinkRecord & { created: boolean }> {
  return inTransaction(deps.ds, async (m) => {
    await m.getRepository(Workspace).findOne({ select: { id: true }, where: { id: workspaceId }, lock: { mode: 'pessimistic_write' } });
    const existing = await m.getRepository(ViewLink).findOneBy({ workspaceId, revokedAt: IsNull() });
    if (existing) return { token: existing.token, workspaceId, createdAt: existing.createdAt.toISOString(), created: false };
    const link = m.create(ViewLink, { workspaceId, token: `vl_${randomBytes(24).toString('base64url')}`, createdBy });
    await m.insert(ViewLink, link); // fills link.createdAt from RETURNING
    return { token: link.token, workspaceId, createdAt: link.createdAt.toISOString(), created: true };
  });
}

/** Revoke the active link; returns whether one existed. The next GET mints a new token. */
export async function unshareViewLink(deps: Deps, workspaceId: string): Promise<boolean> {
  const { affected } = await deps.ds.getRepository(ViewLink).update({ workspaceId, revokedAt: IsNull() }, { revokedAt: () => 'now()' });
  return (affected ?? 0) > 0;
}

/** The workspace a view-link token opens, or null (unknown or revoked). */
export async function workspaceOfViewLink(deps: Deps, token: string): Promise<string | null> {
  if (!token.startsWith('vl_') || token.length > 100) return null;
  const link = await deps.ds.getRepository(ViewLink).findOne({ select: { id: true, workspaceId: true }, where: { token, revokedAt: IsNull() } });
  return link?.workspaceId ?? null;
}

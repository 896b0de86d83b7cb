import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { inTransaction } from '../../db/tx';

export interface ViewLinkRecord {
  token: string;
  workspaceId: string;
  createdAt: string;
}

/**
 * GET /workspaces/{id}/view-link: the workspace's active link, or a new one. The token is stored as
 * is (it must be shown again to every manager who asks) and grants read on that one workspace only.
 */
export async function getOrCreateViewLink(ds: DataSource, workspaceId: string, createdBy: string): Promise<ViewLinkRecord & { created: boolean }> {
  return inTransaction(ds, async (m) => {
    await m.query(`SELECT id FROM workspaces WHERE id = $1 FOR UPDATE`, [workspaceId]);
    const existing = await m.query(`SELECT token, created_at FROM view_links WHERE workspace_id = $1 AND revoked_at IS NULL`, [workspaceId]);
    if (existing.length) return { token: existing[0].token, workspaceId, createdAt: existing[0].created_at.toISOString(), created: false };
    const token = `vl_${randomBytes(24).toString('base64url')}`;
    const [row] = await m.query(`INSERT INTO view_links (workspace_id, token, created_by) VALUES ($1, $2, $3) RETURNING created_at`, [workspaceId, token, createdBy]);
    return { token, workspaceId, createdAt: row.created_at.toISOString(), created: true };
  });
}

/** Revoke the active link; returns whether one existed. The next GET mints a new token. */
export async function revokeViewLink(ds: DataSource, workspaceId: string): Promise<boolean> {
  // TypeORM answers an UPDATE with [rows, affected].
  const [, affected] = await ds.query(`UPDATE view_links SET revoked_at = now() WHERE workspace_id = $1 AND revoked_at IS NULL`, [workspaceId]);
  return Number(affected) > 0;
}

/** The workspace a view-link token opens, or null (unknown or revoked). */
export async function viewLinkWorkspace(ds: DataSource, token: string): Promise<string | null> {
  if (!token.startsWith('vl_') || token.length > 100) return null;
  const rows = await ds.query(`SELECT workspace_id FROM view_links WHERE token = $1 AND revoked_at IS NULL`, [token]);
  return rows.length ? rows[0].workspace_id : null;
}

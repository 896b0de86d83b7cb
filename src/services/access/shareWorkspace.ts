import type { Deps } from '../../deps';
import { loadGrants } from './groups';
import { getOrCreateViewLink, revokeViewLink, viewLinkWorkspace } from './viewLinks';

/** The workspace's view link, minted on first call. */
export async function shareViewLink(deps: Deps, workspaceId: string, createdBy: string): ReturnType<typeof getOrCreateViewLink> {
  return getOrCreateViewLink(deps.ds, workspaceId, createdBy);
}

/** Revoke the view link; requests carrying it lose read at once. */
export async function unshareViewLink(deps: Deps, workspaceId: string): ReturnType<typeof revokeViewLink> {
  return revokeViewLink(deps.ds, workspaceId);
}

/** The workspace a view-link token opens, or null. */
export async function workspaceOfViewLink(deps: Deps, token: string): ReturnType<typeof viewLinkWorkspace> {
  return viewLinkWorkspace(deps.ds, token);
}

/** The groups whose grants apply to a caller (null: anonymous) in a workspace. */
export async function grantsInWorkspace(deps: Deps, ws: Parameters<typeof loadGrants>[1], agentId: string | null, viewLink: boolean): ReturnType<typeof loadGrants> {
  return loadGrants(deps.ds, ws, agentId, viewLink);
}

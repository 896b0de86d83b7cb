import type { Deps } from '../../deps';
import { defaultWorkspaceFor, findWorkspace, listPublicWorkspaces } from './workspaces';

/** A workspace by id or slug (case-insensitive); null when none matches. */
export async function workspaceByIdOrSlug(deps: Deps, idOrSlug: string): ReturnType<typeof findWorkspace> {
  return findWorkspace(deps.ds, idOrSlug);
}

/** The participant's highest-priority membership: workspaces it owns first, then the earliest joined. */
export async function defaultWorkspaceOf(deps: Deps, agentId: string): ReturnType<typeof defaultWorkspaceFor> {
  return defaultWorkspaceFor(deps.ds, agentId);
}

/** The public workspaces, oldest first (at most 500). */
export async function publicWorkspaces(deps: Deps): ReturnType<typeof listPublicWorkspaces> {
  return listPublicWorkspaces(deps.ds);
}

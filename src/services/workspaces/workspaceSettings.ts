import type { Deps } from '../../deps';
import { deleteWorkspace, updateWorkspace } from './settings';

/** Edit the settings of a workspace (the caller's capabilities are checked by the route). */
export async function editWorkspaceSettings(deps: Deps, workspaceId: string, patch: Parameters<typeof updateWorkspace>[2]): ReturnType<typeof updateWorkspace> {
  return updateWorkspace(deps.ds, workspaceId, patch);
}

/** Delete a workspace: every open book is refunded first, then everything scoped to it goes. */
export async function closeWorkspace(deps: Deps, workspaceId: string): Promise<void> {
  await deleteWorkspace(deps.ds, workspaceId, deps.clock.now());
}

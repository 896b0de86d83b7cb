import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { createWorkspace } from './workspaces';

/** A new workspace owned by the caller, with its Public, Trader and Admin groups, in one transaction. */
export async function openWorkspace(deps: Deps, ownerId: string, input: Parameters<typeof createWorkspace>[2]): ReturnType<typeof createWorkspace> {
  return inTransaction(deps.ds, (m) => createWorkspace(m, ownerId, input));
}

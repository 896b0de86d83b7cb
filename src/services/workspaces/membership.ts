import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { DomainError } from '../../errors';
import { addMember, isMember, workspaceByIdOrSlug } from './workspaces';

/** Join a public workspace as a Trader (idempotent); 404 for an unknown one, 403 for a private one. */
export async function joinPublicWorkspace(deps: Deps, agentId: string, idOrSlug: string): Promise<NonNullable<Awaited<ReturnType<typeof workspaceByIdOrSlug>>>> {
  const ws = await workspaceByIdOrSlug(deps, idOrSlug);
  if (!ws) throw new DomainError('workspace_not_found', `No workspace "${idOrSlug}" exists.`);
  if (!ws.public) throw new DomainError('not_authorized', 'This workspace is private: only its admins can add members.', { requiredCapabilities: ['manage'] });
  await inTransaction(deps.ds, (m) => addMember(m, ws.id, agentId, 'Trader'));
  return ws;
}

export async function isWorkspaceMember(deps: Deps, workspaceId: string, agentId: string): Promise<boolean> {
  return isMember(deps.ds, workspaceId, agentId);
}

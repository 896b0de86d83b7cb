import type { Capability } from '../../../domain/capabilities';
import { DomainError } from '../../../errors';
import { rules } from './rule';

/** Workspaces: settings and view links with manage in the workspace named by the path, deletion with manage_workspace; members join public ones. */

/** POST /workspaces */
export const create = rules.identity('account:write');
/** GET /workspaces/current */
export const readCurrent = rules.publicRead();
/** GET /marketplace/workspaces/public */
export const listPublic = rules.optional();
/** POST /marketplace/:workspaceId/join */
export const join = rules.identity();
/** DELETE /workspaces/current/members/:agentId */
export const removeMember = rules.manage();
/** PATCH /workspaces/:id */
export const edit = rules.custom({ ...rules.manage(), workspaceParam: 'id' });
/** DELETE /workspaces/:id */
export const remove = rules.custom({ ...rules.manageWorkspace(), workspaceParam: 'id' });
/** GET /workspaces/:id/view-link */
export const readViewLink = rules.custom({ ...rules.manage(), workspaceParam: 'id' });
/** DELETE /workspaces/:id/view-link */
export const removeViewLink = rules.custom({ ...rules.manage(), workspaceParam: 'id' });
/** GET /workspaces */
export const list = rules.identity();

// Object-level checks: joining and removing members.

/** POST /marketplace/{id}/join: only a public workspace takes members who join themselves. */
export function requireJoinable(ws: { public: boolean }): void {
  if (!ws.public) throw new DomainError('not_authorized', 'This workspace is private: only its admins can add members.', { requiredCapabilities: ['manage'] });
}

/** Removing a member: the caller holds every capability the member's groups grant there. */
export function requireMayRemoveMember(held: ReadonlySet<Capability>, memberCapabilities: readonly string[]): void {
  const missing = [...new Set(memberCapabilities)].filter((c) => !held.has(c as Capability));
  if (missing.length) {
    throw new DomainError('not_authorized', `You cannot remove a member who holds ${missing.join(', ')}: you do not hold ${missing.length > 1 ? 'them' : 'it'} in this workspace.`, {
      requiredCapabilities: missing,
    });
  }
}

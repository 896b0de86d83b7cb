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

import { capabilityChangeNotHeld, type Capability } from '../../../domain/capabilities';
import { DomainError } from '../../../errors';
import { rules } from './rule';

/** Groups: members read, managers change; a manager grants only capabilities it holds itself. */

/** GET /groups */
export const list = rules.read();
/** GET /groups/:id */
export const read = rules.read();
/** POST /groups */
export const create = rules.manage();
/** PUT /groups/:id */
export const set = rules.manage();
/** DELETE /groups/:id */
export const remove = rules.manage();
/** POST /groups/:id/members */
export const addMember = rules.manage();
/** DELETE /groups/:id/members/:agentId */
export const removeMember = rules.manage();

// Object-level checks: a manager grants, removes or hands out only capabilities it holds itself (spec §5.4).

/** 403 when a change of a group's capabilities (before -> after) touches one the caller does not hold. */
export function requireHeldChange(held: ReadonlySet<Capability>, before: readonly string[], after: readonly string[], what: string): void {
  const missing = capabilityChangeNotHeld(held, before, after);
  if (missing.length) {
    throw new DomainError('not_authorized', `You cannot ${what} the ${missing.join(', ')} capabilit${missing.length > 1 ? 'ies' : 'y'}: you do not hold ${missing.length > 1 ? 'them' : 'it'} in this workspace.`, {
      requiredCapabilities: missing,
    });
  }
}

/** 403 when a group a new child participant joins grants a capability its creator does not hold in that workspace. */
export function requireGrantable(held: ReadonlySet<Capability>, group: { name: string; capabilities: readonly string[] }, workspaceSlug: string): void {
  const missing = capabilityChangeNotHeld(held, [], group.capabilities);
  if (missing.length) {
    throw new DomainError('not_authorized', `Group "${group.name}" grants ${missing.join(', ')}, which you do not hold in workspace ${workspaceSlug}.`, {
      requiredCapabilities: missing,
    });
  }
}

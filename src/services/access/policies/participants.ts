import type { Principal } from '../../../domain/capabilities';
import { DomainError } from '../../../errors';
import { rules } from './rule';

/** Participants (routes agents, participants, portfolio): the caller itself, or manage in a workspace the target belongs to (self/admin); creating and deleting children. */

/** POST /agents/register */
export const register = rules.none();
/** GET /agents/me */
export const readMe = rules.identity('account:read');
/** GET /agents/:id */
export const read = rules.selfAdmin();
/** GET /agents/:id/balance */
export const readBalance = rules.selfAdmin();
/** POST /agents */
export const createChild = rules.custom({ label: 'identity', identity: true, scope: 'account:agents' });
/** GET /agents/mine */
export const readMine = rules.custom({ label: 'identity', identity: true, scope: 'account:read' });
/** GET /agents */
export const list = rules.manage();
/** DELETE /agents/:id */
export const remove = rules.custom({ label: 'admin', identity: true, scope: 'account:agents' });
/** GET /agents/:id/trades */
export const readTrades = rules.selfAdmin();
/** GET /agents/:id/positions */
export const readPositions = rules.selfAdmin();
/** GET /agents/:id/market-pnl */
export const readMarketPnl = rules.selfAdmin();
/** GET /agents/:id/dashboard */
export const readDashboard = rules.selfAdmin();

// Object-level checks: who may act on one participant.

/** A participant as the self/owner rule reads it: its id and who made it (parent, creator, claimer). */
export interface OwnedParticipant {
  id: string;
  parentId?: string | null;
  createdBy?: string | null;
  claimedBy?: string | null;
}

/** 'self/owner' (spec §5.4): the participant itself, its creator (or parent, or claimer), or the master key. */
export function isSelfOrCreator(actor: Pick<Principal, 'agentId' | 'isMaster'>, p: OwnedParticipant): boolean {
  return actor.isMaster || p.id === actor.agentId || [p.parentId, p.createdBy, p.claimedBy].includes(actor.agentId);
}

/** 403 unless isSelfOrCreator; `act` names the refused act. A workspace admin is not enough. */
export function requireSelfOrCreator(actor: Pick<Principal, 'agentId' | 'isMaster'>, p: OwnedParticipant, act: string): void {
  if (isSelfOrCreator(actor, p)) return;
  throw new DomainError('not_authorized', `Only the participant itself or its creator may ${act} (a workspace admin is not enough).`, {
    requiredCapabilities: ['self/owner'],
  });
}

/**
 * 'self/admin' (spec §5.4): targeting another participant needs a workspace to hold manage in; the
 * caller (not the master key) names none. Itself and the master key pass before this is asked.
 */
export function requireWorkspaceToTarget<T>(access: T | null): asserts access is T {
  if (!access) throw new DomainError('not_authorized', 'Viewing another participant needs manage in a workspace it belongs to.', { requiredCapabilities: ['manage'] });
}

/** DELETE /agents/{id}, first half: the participant itself, its creator (or parent), or the master key. */
export function requireMayDelete(actor: Pick<Principal, 'agentId' | 'isMaster'>, target: { id: string; parentId: string | null; createdBy: string | null }): void {
  if (actor.isMaster || [target.id, target.parentId, target.createdBy].includes(actor.agentId)) return;
  throw new DomainError('not_authorized', 'Only the participant itself, its creator, or the master key may delete a participant.', {
    requiredCapabilities: ['self/owner', 'manage'],
  });
}

/** DELETE /agents/{id}, second half: manage in a workspace the participant belongs to (none asked when it belongs to none). */
export function requireManageToDelete(managesOne: boolean): void {
  if (!managesOne) throw new DomainError('not_authorized', 'Deleting a participant also needs manage in a workspace it belongs to.', { requiredCapabilities: ['manage'] });
}

import { DomainError } from '../../../errors';
import { rules } from './rule';

/** Proposals: read where the workspace reads, propose and comment with trade, decide with manage; the proposer may withdraw its own. */

/** POST /proposals */
export const create = rules.trade();
/** GET /proposals */
export const list = rules.publicRead();
/** GET /proposals/scorecard */
export const readScorecard = rules.publicRead();
/** GET /proposals/:id */
export const read = rules.publicRead();
/** POST /proposals/:id/approve */
export const approve = rules.manage();
/** POST /proposals/:id/decline */
export const decline = rules.manage();
/** POST /proposals/:id/withdraw */
export const withdraw = rules.trade();
/** POST /proposals/:id/comments */
export const comment = rules.trade();
/** GET /proposals/:id/comments */
export const readComments = rules.publicRead();

// Object-level checks.

/** Withdrawing a proposal: its proposer, or a holder of manage. */
export function requireMayWithdraw(caller: { agentId: string; canManage: boolean }, proposedBy: string | null): void {
  if (caller.canManage || proposedBy === caller.agentId) return;
  throw new DomainError('not_authorized', 'Only the proposer, or a holder of manage, may withdraw this proposal.', { requiredCapabilities: ['manage'] });
}

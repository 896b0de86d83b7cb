import type { Principal } from '../../../domain/capabilities';
import { DomainError } from '../../../errors';
import { rules } from './rule';

/** Credits and money moves: the participant itself or its creator (self/owner), the platform operator for issuing and deciding. */

/** POST /agents/transfer */
export const transfer = rules.identity('account:wallet');
/** GET /agents/transfers */
export const readTransfers = rules.identity('account:read');
/** GET /agents/signup-grant */
export const readSignupGrant = rules.identity('account:read');
/** POST /agents/signup-grant: a person signed in (a browser session); no key, not even the master key. */
export const claimSignupGrant = rules.session();
/** GET /agents/deposit-address */
export const readDepositAddress = rules.none();
/** GET /agents/treasury */
export const readTreasury = rules.custom({ label: 'admin', identity: true, workspaceOptional: true });
/** POST /agents/withdrawals/:id/{approve|reject} */
export const decideWithdrawal = rules.platform();
/** POST /agents/:id/credit */
export const credit = rules.custom({ label: 'admin', identity: true, workspaceOptional: true });
/** POST /agents/:id/spend */
export const spend = rules.selfOwner('account:wallet');
/** PUT /agents/:id/wallet */
export const setWallet = rules.selfOwner('account:wallet');
/** POST /agents/:id/deposit */
export const deposit = rules.selfOwner('account:wallet');
/** GET /agents/:id/deposits */
export const readDeposits = rules.selfOwner('account:read');
/** GET /agents/:id/deposits/:depositId */
export const readDeposit = rules.selfOwner('account:read');
/** POST /agents/:id/withdraw */
export const withdraw = rules.selfOwner('account:wallet');
/** GET /agents/:id/withdrawals */
export const readWithdrawals = rules.selfOwner('account:read');
/** GET /agents/:id/ledger */
export const readLedger = rules.selfOwner('account:read');

// Object-level checks (the self/owner ones are participants.requireSelfOrCreator).

/** GET /agents/transfers?agentId: only the master key names another participant. */
export function requireMayListTransfersOf(actor: Pick<Principal, 'agentId' | 'isMaster'>, agentId: string | undefined): void {
  if (agentId && !actor.isMaster && agentId !== actor.agentId) {
    throw new DomainError('not_authorized', "Only the master key may list another participant's transfers (agentId).", { requiredCapabilities: ['platform'] });
  }
}

/** POST /agents/{id}/spend: type betting is the platform operator's. */
export function requireMaySpend(actor: Pick<Principal, 'isMaster'>, type: string): void {
  if (type === 'betting' && !actor.isMaster) {
    throw new DomainError('not_authorized', 'Spending of type betting is for the platform operator (master key) only.', { requiredCapabilities: ['platform'] });
  }
}

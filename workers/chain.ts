import type { Deps } from '../src/deps';
import { sendWithdrawal, verifyDeposit } from '../src/services/credits';
import type { Processors } from './types';

/** chain: deposit verification and withdrawals; each job re-enqueues its next check while the chain is not there yet. */
export const chainProcessors = (deps: Deps): Processors<'chain'> => ({
  verifyDeposit: async (data) => verifyDeposit(deps, data.depositId, data.check),
  sendWithdrawal: async (data) => sendWithdrawal(deps, data.withdrawalId, data.check),
});

import type { Deps } from '../../deps';
import { requireChain } from './chainAccess';
import { creditAccounts } from './accounts';
import { rows } from '../../db/queryRows';

/** GET /agents/deposit-address: where and how to deposit (no secrets). */
export function depositAddress(deps: Deps) {
  const s = requireChain(deps).settings;
  return {
    address: s.treasury,
    chainId: s.chainId,
    asset: 'USDC',
    contract: s.token,
    decimals: s.decimals,
    confirmations: s.confirmations,
    creditValueUsd: s.creditValueUsd,
    buyFeePercent: s.buyFeePercent,
  };
}

/** GET /agents/treasury: the treasury's on-chain balances beside the credits it owes. */
export async function treasuryStatus(deps: Deps) {
  const chain = requireChain(deps);
  const s = chain.settings;
  const [tokenUnits, gasWei, [held], [pending]] = await Promise.all([
    chain.tokenBalance(s.treasury),
    chain.gasBalance(s.treasury),
    rows<{ v: string }>(deps.ds, `SELECT coalesce(sum(balance), 0)::text AS v FROM accounts WHERE kind = 'participant'`),
    rows<{ v: string }>(deps.ds, `SELECT balance::text AS v FROM accounts WHERE id = $1`, [creditAccounts.withdrawalsPending]),
  ]);
  return {
    address: s.treasury,
    chainId: s.chainId,
    contract: s.token,
    decimals: s.decimals,
    tokenUnits,
    gasWei,
    /** Credits participants hold plus withdrawals not yet paid: what the treasury may be asked for. */
    creditsOutstanding: BigInt(held.v) + BigInt(pending?.v ?? '0'),
    withdrawalsPending: BigInt(pending?.v ?? '0'),
    unitsPerCredit: s.unitsPerCredit,
  };
}

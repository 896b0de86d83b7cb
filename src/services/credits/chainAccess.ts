import { getAddress } from 'ethers';
import type { DataSource, EntityManager } from 'typeorm';
import { chainOf, type Chain } from '../../chain/client';
import type { Deps } from '../../deps';
import { recheckDelay } from '../../domain/credits';
import { AgentWallet } from '../../entities/credits';
import { DomainError } from '../../errors';

/** The configured chain, or 503 treasury_not_configured. */
export function requireChain(deps: Deps): Chain {
  const chain = chainOf(deps.config);
  if (!chain) {
    throw new DomainError('treasury_not_configured', 'No chain is configured on this instance (CHAIN_RPC_URL, CHAIN_ID, USDC_ADDRESS, TREASURY_PRIVATE_KEY): deposits and withdrawals are off.');
  }
  return chain;
}

/** Whether deposits and withdrawals work here (a chain is configured): GET /public-config's usdcSettlementEnabled. */
export function settlementEnabled(deps: Deps): boolean {
  return chainOf(deps.config) !== null;
}

/** A checksummed address, or 400. */
export function checksummed(address: string): string {
  try {
    return getAddress(address);
  } catch {
    throw new DomainError('validation_failed', `"${address}" is not a valid address (0x and 40 hex digits, with a correct checksum if mixed-case).`);
  }
}

export async function walletOf(m: DataSource | EntityManager, agentId: string): Promise<string | null> {
  const w = await m.getRepository(AgentWallet).findOne({ where: { agentId } });
  return w?.address ?? null;
}

/** The delay of re-check number n of a chain job. */
export function chainDelay(deps: Deps, n: number): number {
  return recheckDelay(n, deps.config.CHAIN_RECHECK_MS, deps.config.CHAIN_RECHECK_MAX_MS);
}

/** Job options of chain jobs: a job that throws (the node unreachable) is retried with backoff. */
export const CHAIN_JOB_OPTS = { attempts: 8, backoff: { type: 'exponential', delay: 200 } } as const;

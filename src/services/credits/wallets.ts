import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { AgentWallet } from '../../entities/credits';
import { inTransaction } from '../../db/tx';
import { resolveOwnedAgent } from '../access';
import { checksummed } from './chainAccess';

/** PUT /agents/{id}/wallet: register (or replace) the wallet deposits must come from and withdrawals go to. */
export async function registerWallet(deps: Deps, actor: Principal, idParam: string, walletAddress: string): Promise<AgentWallet> {
  const address = checksummed(walletAddress);
  return inTransaction(deps.ds, async (m) => {
    const agentId = await resolveOwnedAgent(m, actor, idParam, 'register its wallet');
    await m.query(
      `INSERT INTO agent_wallets (agent_id, address, updated_at) VALUES ($1, $2, now())
       ON CONFLICT (agent_id) DO UPDATE SET address = EXCLUDED.address, updated_at = now()`,
      [agentId, address],
    );
    return m.getRepository(AgentWallet).findOneOrFail({ where: { agentId } });
  });
}

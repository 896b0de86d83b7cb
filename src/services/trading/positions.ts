import type { EntityManager } from 'typeorm';

/** Trading owns `positions`; a settlement records each holder's payout through this (lifecycle's resolve and void). */
export async function recordPayouts(m: EntityManager, marketId: string, pays: Array<{ agent: string; amount: bigint }>, now: Date): Promise<void> {
  if (!pays.length) return;
  await m.query(
    `UPDATE positions p SET payout = v.pay, updated_at = $4 FROM unnest($2::text[], $3::bigint[]) AS v(agent, pay)
      WHERE p.market_id = $1 AND p.agent_id = v.agent`,
    [marketId, pays.map((p) => p.agent), pays.map((p) => p.amount.toString()), now],
  );
}

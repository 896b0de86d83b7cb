/**
 * Recipe: trade a proposal's branches. For every pending proposal, buy the branch this agent believes
 * in (here: the one whose book is cheaper relative to the baseline) on the headline metric and date.
 * Uses only the public API and the generated types. Run: AGENT_KEY=... WORKSPACE=... npx tsx examples/proposal-trader.ts
 */
import type { components } from './api';
import { call } from './build-agent';

type Proposal = components['schemas']['Proposal'];

/** Which branch to buy: the one whose consensus sits lower, if the gap is over `edge` (metric units). */
export function branchToBuy(p: Proposal, edge = 1): { marketId: string; branch: 'approved' | 'declined' } | null {
  const row = p.impact.find((e) => e.metricId === p.headline?.metricId && e.targetDate === p.headline?.targetDate) ?? p.impact[0];
  if (!row?.approved || !row.declined || row.impact === null || Math.abs(row.impact) < edge) return null;
  return row.impact < 0 ? { marketId: row.approved.marketId, branch: 'approved' } : { marketId: row.declined.marketId, branch: 'declined' };
}

export async function tradeProposals(amount = 2): Promise<void> {
  const proposals = await call<Proposal[]>('GET', '/proposals?status=pending&sort=impact&limit=20');
  for (const p of proposals.filter((x) => !x.closed)) {
    const pick = branchToBuy(p);
    if (!pick) continue;
    const r = await call<{ consensus: number; shares: number }>('POST', '/predictions/trade', { marketId: pick.marketId, direction: 'higher', amount }, `branch-${pick.marketId}`);
    console.log(`${p.title}: bought ${r.shares} higher on the ${pick.branch} branch, now ${r.consensus}`);
  }
}

if (require.main === module) {
  tradeProposals().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

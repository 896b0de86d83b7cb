import { z } from 'zod';
import { toCredits } from '../../domain/money';
import { listMarkets } from '../../services/markets';
import { positionMetricValue, positionsOf, positionWorth, presentPosition } from '../../services/portfolio';
import { auth } from '../auth';
import { presentMarketSummary } from '../presenters/market';
import { defineRoute } from '../registry';
import { limitQuery } from '../schemas/common';
import { agentIdParam, resolveSelfOrAdmin } from './agents';

/** Your own history spans every workspace; a manager viewing someone else sees this workspace only. */
const viewScope = (c: { caller: { agentId: string } | null; access: { workspace: { id: string } } | null }, agentId: string) =>
  c.caller?.agentId === agentId ? null : (c.access?.workspace.id ?? null);

defineRoute({
  method: 'GET',
  path: '/agents/:id/trades',
  auth: auth.selfAdmin(),
  summary: 'Trade history, newest first: { id, marketId, metricName, targetDate, direction, kind, shares, cost (signed), marketStatus, createdAt }. Query limit (default 100, max 500).',
  params: agentIdParam,
  query: z.object({ limit: limitQuery(100, 500) }),
  handler: async (c) => {
    const agent = await resolveSelfOrAdmin(c);
    const rows = await c.deps.ds.query(
      `SELECT t.id, t.market_id, t.kind, t.direction, t.shares, t.cost, t.created_at, mt.name AS metric_name, mk.target_date, mk.status,
              mk.proposal_id, mk.branch
         FROM trades t JOIN markets mk ON mk.id = t.market_id JOIN metrics mt ON mt.id = mk.metric_id
        WHERE t.agent_id = $1 AND ($2::uuid IS NULL OR t.workspace_id = $2::uuid)
        ORDER BY t.seq DESC LIMIT $3`,
      [agent.id, viewScope(c, agent.id), c.query.limit],
    );
    return rows.map((r: Record<string, any>) => ({ // eslint-disable-line @typescript-eslint/no-explicit-any
      id: r.id,
      marketId: r.market_id,
      metricName: r.metric_name,
      targetDate: r.target_date,
      proposalId: r.proposal_id,
      branch: r.branch,
      direction: r.direction,
      kind: r.kind,
      shares: toCredits(BigInt(r.shares)),
      cost: toCredits(BigInt(r.cost)),
      marketStatus: r.status,
      createdAt: r.created_at.toISOString(),
    }));
  },
});

defineRoute({
  method: 'GET',
  path: '/agents/:id/positions',
  auth: auth.selfAdmin(),
  summary: 'Positions with worth (at the consensus), profit and status (open, conditional, closed, resolved, voided).',
  params: agentIdParam,
  handler: async (c) => {
    const agent = await resolveSelfOrAdmin(c);
    const now = c.deps.clock.now();
    const scope = viewScope(c, agent.id);
    return (await positionsOf(c.deps.ds, agent.id, scope)).map((p) => presentPosition(p, now));
  },
});

defineRoute({
  method: 'GET',
  path: '/agents/:id/market-pnl',
  auth: auth.selfAdmin(),
  summary: 'Per market: netCash, markValueConsensus, metricPayoutValue, pnlConsensus, pnlMetric; open markets first, then by |pnlConsensus|.',
  params: agentIdParam,
  handler: async (c) => {
    const agent = await resolveSelfOrAdmin(c);
    const scope = viewScope(c, agent.id);
    const positions = await positionsOf(c.deps.ds, agent.id, scope);
    const totals = new Map<string, number | null>();
    if (positions.length) {
      const ids = [...new Set(positions.map((p) => p.market.metricId))];
      for (const r of await c.deps.ds.query(`SELECT id, total FROM metrics WHERE id = ANY($1::uuid[])`, [ids])) totals.set(r.id, r.total);
    }
    const rows = positions.map((p) => {
      const mark = positionWorth(p).worth;
      const metricValue = positionMetricValue(p, totals.get(p.market.metricId) ?? null);
      const open = p.market.status === 'open' || p.market.status === 'closed';
      return {
        marketId: p.market.id,
        metricName: p.market.metricName,
        targetDate: p.market.targetDate,
        open,
        netCash: toCredits(-p.netCost),
        markValueConsensus: toCredits(mark),
        metricPayoutValue: metricValue === null ? null : toCredits(metricValue),
        pnlConsensus: toCredits(mark - p.netCost),
        pnlMetric: metricValue === null ? null : toCredits(metricValue - p.netCost),
      };
    });
    rows.sort((a, b) => Number(b.open) - Number(a.open) || Math.abs(b.pnlConsensus) - Math.abs(a.pnlConsensus));
    return rows;
  },
});

defineRoute({
  method: 'GET',
  path: '/agents/:id/dashboard',
  auth: auth.selfAdmin(),
  summary: 'Balance and the most liquid active markets of the workspace, compact. Query limit (default 10, max 100).',
  params: agentIdParam,
  query: z.object({ limit: limitQuery(10, 100) }),
  handler: async (c) => {
    const agent = await resolveSelfOrAdmin(c);
    const markets = c.access ? await listMarkets(c.deps.ds, c.access.workspace.id, { limit: 1000, statuses: ['open'] }) : [];
    markets.sort((a, b) => (b.liquidity > a.liquidity ? 1 : b.liquidity < a.liquidity ? -1 : b.tradeCount - a.tradeCount));
    return {
      balance: toCredits(agent.balance),
      markets: markets.slice(0, c.query.limit).map((mk) => ({ ...presentMarketSummary(mk), metricName: mk.metricName, liquidity: toCredits(mk.liquidity), tradeCount: mk.tradeCount })),
    };
  },
});

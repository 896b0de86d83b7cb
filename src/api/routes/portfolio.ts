import { z } from 'zod';
import { mostLiquidMarkets } from '../../services/books';
import { readableRows, policies } from '../../services/access';
import { agentPositions, marketPnlOf, tradeHistoryOf } from '../../services/portfolio';
import { presentDashboard, presentMarketPnl, presentPosition, presentTradeRow } from '../presenters/portfolio';
import { dashboardSchema, marketPnlSchema, positionSchema, tradeRowSchema } from '../schemas/participants';
import { defineRoute } from '../registry';
import { limitQuery } from '../schemas/common';
import { agentIdParam, resolveSelfOrAdmin } from './agents';

/** Your own history spans every workspace; a manager viewing someone else sees this workspace only. */
const viewScope = (c: { caller: { agentId: string } | null; access: { workspace: { id: string } } | null }, agentId: string) =>
  c.caller?.agentId === agentId ? null : (c.access?.workspace.id ?? null);

export const getAgentsByIdTrades = defineRoute({
  method: 'GET',
  path: '/agents/:id/trades',
  response: z.array(tradeRowSchema),
  errors: ['not_found'],
  auth: policies.participants.readTrades,
  summary: 'Trade history, newest first: { id, marketId, metricName, targetDate, direction, kind, shares, cost (signed), marketStatus, createdAt }. Query limit (default 100, max 500).',
  params: agentIdParam,
  query: z.object({ limit: limitQuery(100, 500) }),
  handler: async (c) => {
    const agent = await resolveSelfOrAdmin(c);
    const trades = await tradeHistoryOf(c.deps, agent.id, viewScope(c, agent.id), c.query.limit);
    return trades.map(presentTradeRow);
  },
});

export const getAgentsByIdPositions = defineRoute({
  method: 'GET',
  path: '/agents/:id/positions',
  response: z.array(positionSchema),
  errors: ['not_found'],
  auth: policies.participants.readPositions,
  summary: 'Positions with worth (at the consensus), profit and status (open, conditional, closed, resolved, voided).',
  params: agentIdParam,
  handler: async (c) => {
    const agent = await resolveSelfOrAdmin(c);
    const now = c.deps.clock.now();
    const scope = viewScope(c, agent.id);
    return (await agentPositions(c.deps, agent.id, scope)).map((p) => presentPosition(p, now));
  },
});

export const getAgentsByIdMarketPnl = defineRoute({
  method: 'GET',
  path: '/agents/:id/market-pnl',
  response: z.array(marketPnlSchema),
  errors: ['not_found'],
  auth: policies.participants.readMarketPnl,
  summary: 'Per market: netCash, markValueConsensus, metricPayoutValue, pnlConsensus, pnlMetric; open markets first, then by |pnlConsensus|.',
  params: agentIdParam,
  handler: async (c) => {
    const agent = await resolveSelfOrAdmin(c);
    const scope = viewScope(c, agent.id);
    return (await marketPnlOf(c.deps, agent.id, scope)).map(presentMarketPnl);
  },
});

export const getAgentsByIdDashboard = defineRoute({
  method: 'GET',
  path: '/agents/:id/dashboard',
  response: dashboardSchema,
  errors: ['not_found'],
  auth: policies.participants.readDashboard,
  summary: 'Balance and the most liquid active markets of the workspace, compact. Query limit (default 10, max 100).',
  params: agentIdParam,
  query: z.object({ limit: limitQuery(10, 100) }),
  handler: async (c) => {
    const agent = await resolveSelfOrAdmin(c);
    // The most liquid books the caller may read: asked for all, filtered by the policy, then cut.
    const markets = c.access ? (await readableRows(c.deps, c.access.policy, await mostLiquidMarkets(c.deps, c.access.workspace.id, 1000))).slice(0, c.query.limit) : [];
    return presentDashboard(agent.balance, markets);
  },
});

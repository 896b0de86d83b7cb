import type { DataSource, EntityManager } from 'typeorm';
import { rows } from '../../db/queryRows';
import { earningsOf, emptySums, type Earnings, type ScoreSums } from '../../domain/calibration';
import { probability } from '../../domain/lmsr';
import { positionsOf, type PositionView } from '../portfolio';
import { readSums, sumSelect } from './sums';

type Q = DataSource | EntityManager;

/** A public position on a book still open, with its book's quantities and its trades there (int8 as text). */
interface OpenPositionSums {
  agent_id: string;
  market_id: string;
  shares_higher: string;
  shares_lower: string;
  net_cost: string;
  q_higher: string;
  q_lower: string;
  b: string;
  funded: boolean;
  trades: number;
  volume: string;
}

/** A participant's figures over public workspaces (spec §2.7: stats aggregate public workspaces only). */
export interface PublicTotals {
  agentId: string;
  earnings: Earnings;
  resolvedMarkets: number;
  /** Trades on resolved books (the aggregate) plus trades on books still open. */
  trades: number;
  volume: bigint;
  sums: ScoreSums;
  lastTradeAt: Date | null;
}

/**
 * Totals of several participants, leaving out the books of `hiddenMetricIds` (publiclyHiddenMetricIds): the resolved part from participant_stats (written when books
 * resolved), the open part from their positions on books still open (marked at the consensus) and
 * those books' trades. Nothing here reads resolved history.
 */
export async function publicTotals(q: Q, agentIds: readonly string[], hiddenMetricIds: readonly string[]): Promise<Map<string, PublicTotals>> {
  const out = new Map<string, PublicTotals>();
  if (!agentIds.length) return out;
  const ids = [...agentIds];
  const [agg, open, last] = await Promise.all([
    rows<Record<string, unknown> & { agent_id: string }>(
      q,
      `SELECT s.agent_id, ${sumSelect('s')} FROM participant_stats s JOIN workspaces w ON w.id = s.workspace_id AND w.public
        WHERE s.agent_id = ANY($1) AND NOT (s.metric_id = ANY($2::uuid[])) GROUP BY s.agent_id`,
      [ids, hiddenMetricIds],
    ),
    rows<OpenPositionSums>(
      q,
      `SELECT p.agent_id, p.market_id, p.shares_higher::text, p.shares_lower::text, p.net_cost::text, mk.q_higher::text, mk.q_lower::text, mk.b::text, mk.funded,
              (SELECT count(*) FROM trades t WHERE t.market_id = p.market_id AND t.agent_id = p.agent_id)::int AS trades,
              (SELECT coalesce(sum(abs(t.cost)), 0) FROM trades t WHERE t.market_id = p.market_id AND t.agent_id = p.agent_id)::text AS volume
         FROM positions p JOIN markets mk ON mk.id = p.market_id AND mk.status IN ('open','closed')
         JOIN workspaces w ON w.id = p.workspace_id AND w.public
        WHERE p.agent_id = ANY($1) AND NOT (mk.metric_id = ANY($2::uuid[]))`,
      [ids, hiddenMetricIds],
    ),
    rows<{ agent_id: string; last: Date | null }>(
      q,
      `SELECT a.id AS agent_id,
              (SELECT t.created_at FROM trades t JOIN workspaces w ON w.id = t.workspace_id AND w.public JOIN markets mk ON mk.id = t.market_id
                WHERE t.agent_id = a.id AND NOT (mk.metric_id = ANY($2::uuid[])) ORDER BY t.seq DESC LIMIT 1) AS last
         FROM unnest($1::text[]) AS a(id)`,
      [ids, hiddenMetricIds],
    ),
  ]);
  const aggBy = new Map<string, ReturnType<typeof readSums>>(agg.map((r) => [r.agent_id, readSums(r)]));
  const lastBy = new Map<string, Date | null>(last.map((r) => [r.agent_id, r.last]));
  for (const id of ids) {
    const a = aggBy.get(id);
    const mine = open.filter((p) => p.agent_id === id);
    const positions = mine.map((p) => ({
      sharesHigher: BigInt(p.shares_higher),
      sharesLower: BigInt(p.shares_lower),
      netCost: BigInt(p.net_cost),
      probability: p.funded && BigInt(p.b) > 0n ? probability({ qHigher: BigInt(p.q_higher), qLower: BigInt(p.q_lower), b: BigInt(p.b) }) : null,
    }));
    out.set(id, {
      agentId: id,
      earnings: earningsOf(a?.settled ?? 0n, positions),
      resolvedMarkets: a?.resolvedMarkets ?? 0,
      trades: (a?.trades ?? 0) + mine.reduce((n, p) => n + p.trades, 0),
      volume: (a?.volume ?? 0n) + mine.reduce((v, p) => v + BigInt(p.volume), 0n),
      sums: a?.sums ?? emptySums(),
      lastTradeAt: lastBy.get(id) ?? null,
    });
  }
  return out;
}

/**
 * A participant's resolved-book figures from the aggregate (participant_stats), over every workspace
 * (workspaceId null) or one, public or not: for the participant's own views (GET /agents/mine) and a
 * workspace admin's (GET /agents).
 */
export async function resolvedTotalsOf(q: Q, agentId: string, workspaceId: string | null): Promise<{ settled: bigint; resolvedMarkets: number; trades: number; volume: bigint }> {
  const [r] = await rows<{ settled: string; resolved_markets: number; trades: number; volume: string }>(
    q,
    `SELECT coalesce(sum(settled), 0)::text AS settled, coalesce(sum(resolved_markets), 0)::int AS resolved_markets,
            coalesce(sum(trades), 0)::int AS trades, coalesce(sum(volume), 0)::text AS volume
       FROM participant_stats WHERE agent_id = $1 AND ($2::uuid IS NULL OR workspace_id = $2::uuid)`,
    [agentId, workspaceId],
  );
  return { settled: BigInt(r.settled), resolvedMarkets: r.resolved_markets, trades: r.trades, volume: BigInt(r.volume) };
}

/** A participant's positions on books still open (open or closed), over every workspace or one: the live part of its results. */
export async function openPositionsOf(q: Q, agentId: string, workspaceId: string | null): Promise<PositionView[]> {
  return positionsOf(q, agentId, workspaceId, { liveOnly: true });
}

/** Trades on a participant's open books (count), and its newest trade's time, over every workspace. */
export async function liveTradesOf(q: Q, agentId: string, openMarketIds: readonly string[]): Promise<{ trades: number; lastTradeAt: Date | null }> {
  const [r] = await rows<{ n: number; last: Date | null }>(
    q,
    `SELECT (SELECT count(*) FROM trades t WHERE t.agent_id = $1 AND t.market_id = ANY($2::uuid[]))::int AS n,
            (SELECT t.created_at FROM trades t WHERE t.agent_id = $1 ORDER BY t.seq DESC LIMIT 1) AS last`,
    [agentId, [...openMarketIds]],
  );
  return { trades: r.n, lastTradeAt: r.last ?? null };
}

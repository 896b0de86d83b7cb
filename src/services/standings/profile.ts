import type { Deps } from '../../deps';
import { firstRow, rows } from '../../db/queryRows';
import { markAtConsensus, scoresOf, type Scores } from '../../domain/calibration';
import type { Principal } from '../../domain/capabilities';
import { consensusOf, probability } from '../../domain/lmsr';
import { switchesOf } from '../../domain/webhooks';
import { DomainError } from '../../errors';
import { publiclyHiddenMetricIds, readPoliciesIn, readPoliciesOf, readableRowsIn } from '../access';
import { displayStatus, marketLateral, rowToMarket, type MarketRaw } from '../books';
import { earningsRank } from './leaderboard';
import { publicTotals, type PublicTotals } from './totals';

export const PROFILE_HISTORY = 50;
export const PROFILE_LIST = 20;
export const PROFILE_OPEN_POSITIONS = 100;

/** The participant's agents row with its balance (int8 as text). */
type ProfileAgentRaw = {
  id: string;
  nickname: string;
  intent: string;
  bio: string;
  created_at: Date;
  parent_id: string | null;
  created_by: string | null;
  claimed_by: string | null;
  notifications: Record<string, boolean> | null;
  balance: string;
};

/** Where a position's or trade's workspace is, for the viewer's policy there. */
interface InWorkspace {
  workspace_id: string;
  workspace_name: string;
  workspace_slug: string;
  ws_public: boolean;
  ws_owner: string | null;
  metric_id: string;
  proposal_id: string | null;
  proposal_title: string | null;
}

/** An open position with its book (marketLateral's columns) and workspace. */
type OpenPositionRaw = MarketRaw & InWorkspace & { shares_higher: string; shares_lower: string; net_cost: string };

interface ProfileTradeRaw extends InWorkspace {
  id: string;
  kind: 'buy' | 'sell' | 'redeem';
  direction: 'higher' | 'lower' | null;
  shares: string;
  cost: string;
  consensus_before: number;
  consensus_after: number;
  created_at: Date;
  market_id: string;
  metric_name: string;
  target_date: string;
}

interface ProfileTransferRaw {
  id: string;
  from_agent: string;
  to_agent: string;
  amount: string;
  memo: string | null;
  created_at: Date;
  counterparty_id: string | null;
  counterparty_nickname: string | null;
}

type Named = { id: string; nickname: string };

export interface ProfileStats extends PublicTotals {
  rank: number | null;
  scores: Scores;
}

/**
 * GET /agents/{idOrNickname}/public (spec §2.7). Matched by id, then case-insensitively by nickname.
 * stats and activeWorkspaces cover public workspaces only, and stats, the profit history and the rank leave out
 * the metrics the public may not read there (issue 65); openPositions and recentTrades also the
 * workspaces where the viewer has read (every workspace for the master key); the wallet address,
 * notification switches, balance history and transfers only for the participant itself, its owner
 * (parent, creator or claimer), or the master key (others get empty lists: both follow private
 * workspaces' money and memos). Money in nano; the presenter shows credits.
 */
export async function publicProfile(deps: Deps, viewer: Principal | null, idOrNickname: string) {
  const a = await firstRow<ProfileAgentRaw>(
    deps.ds,
    `SELECT a.*, coalesce(ac.balance, 0)::text AS balance FROM agents a LEFT JOIN accounts ac ON ac.id = 'agent:' || a.id
      WHERE a.id = $1 OR lower(a.nickname) = lower($1)
      ORDER BY (a.id = $1) DESC, a.created_at ASC LIMIT 1`,
    [idOrNickname],
  );
  if (!a) throw new DomainError('not_found', `No participant "${idOrNickname}" exists.`);
  // Where the viewer may read beyond public workspaces comes from the access area's policy, and a
  // policy that narrows metrics hides the positions and trades on the metrics it hides.
  const [policies, hiddenMetricIds] = await Promise.all([readPoliciesOf(deps, viewer), publiclyHiddenMetricIds(deps)]);
  const visible = (alias: string) => (policies === 'all' ? 'true' : `(${alias}.public OR ${alias}.id = ANY($2::uuid[]))`);
  const visibleArgs = policies === 'all' ? [] : [[...policies.keys()]];
  const ownerIds = [a.id, a.parent_id, a.created_by, a.claimed_by].filter((id): id is string => !!id);
  const privateView = !!viewer && (viewer.isMaster || ownerIds.includes(viewer.agentId));
  const now = deps.clock.now();

  const [parent, children, owner, history, results, openRows, trades, transfers, workspaces, wallet] = await Promise.all([
    a.parent_id ? rows<Named>(deps.ds, `SELECT id, nickname FROM agents WHERE id = $1`, [a.parent_id]) : Promise.resolve([]),
    rows<Named & { parent_id: string }>(deps.ds, `SELECT id, nickname, parent_id FROM agents WHERE parent_id = $1 ORDER BY created_at, id`, [a.id]),
    a.claimed_by ?? a.created_by ? rows<Named>(deps.ds, `SELECT id, nickname FROM agents WHERE id = $1`, [a.claimed_by ?? a.created_by]) : Promise.resolve([]),
    // Balance history and transfers follow every workspace (private ones too) and carry memos: the private view's only (issue 57).
    privateView ? rows<{ amount: string; created_at: Date }>(deps.ds, `SELECT amount::text, created_at FROM ledger_entries WHERE account_id = $1 ORDER BY id DESC LIMIT $2`, [`agent:${a.id}`, PROFILE_HISTORY]) : Promise.resolve([]),
    rows<{ resolved_at: Date; settled: string }>(
      deps.ds,
      `SELECT r.resolved_at, r.settled::text FROM participant_results r JOIN workspaces w ON w.id = r.workspace_id AND w.public
        WHERE r.agent_id = $1 AND NOT (r.metric_id = ANY($3::uuid[])) ORDER BY r.resolved_at DESC, r.market_id DESC LIMIT $2`,
      [a.id, PROFILE_HISTORY, hiddenMetricIds],
    ),
    rows<OpenPositionRaw>(
      deps.ds,
      `SELECT p.shares_higher::text, p.shares_lower::text, p.net_cost::text, sub.*, w.name AS workspace_name, w.slug AS workspace_slug, w.public AS ws_public, w.owner_id AS ws_owner, pr.title AS proposal_title
         FROM positions p ${marketLateral('mk.id = p.market_id')}
         JOIN workspaces w ON w.id = p.workspace_id
         LEFT JOIN proposals pr ON pr.id = sub.proposal_id
        WHERE p.agent_id = $1 AND sub.status IN ('open','closed') AND ${visible('w')}
        ORDER BY sub.period_end NULLS LAST, sub.id LIMIT ${PROFILE_OPEN_POSITIONS}`,
      [a.id, ...visibleArgs],
    ),
    rows<ProfileTradeRaw>(
      deps.ds,
      `SELECT t.id, t.kind, t.direction, t.shares::text, t.cost::text, t.consensus_before, t.consensus_after, t.created_at, t.market_id,
              w.id AS workspace_id, w.name AS workspace_name, w.slug AS workspace_slug, w.public AS ws_public, w.owner_id AS ws_owner, mk.proposal_id, mk.metric_id, pr.title AS proposal_title, mt.name AS metric_name, mk.target_date
         FROM trades t JOIN workspaces w ON w.id = t.workspace_id JOIN markets mk ON mk.id = t.market_id JOIN metrics mt ON mt.id = mk.metric_id
         LEFT JOIN proposals pr ON pr.id = mk.proposal_id
        WHERE t.agent_id = $1 AND ${visible('w')}
        ORDER BY t.seq DESC LIMIT ${PROFILE_LIST}`,
      [a.id, ...visibleArgs],
    ),
    privateView
      ? rows<ProfileTransferRaw>(
          deps.ds,
          `SELECT t.id, t.from_agent, t.to_agent, t.amount::text, t.memo, t.created_at, c.id AS counterparty_id, c.nickname AS counterparty_nickname
             FROM (SELECT * FROM (SELECT * FROM transfers WHERE from_agent = $1 ORDER BY created_at DESC LIMIT $2) o
                   UNION ALL SELECT * FROM (SELECT * FROM transfers WHERE to_agent = $1 ORDER BY created_at DESC LIMIT $2) i) t
             LEFT JOIN agents c ON c.id = CASE WHEN t.from_agent = $1 THEN t.to_agent ELSE t.from_agent END
            ORDER BY t.created_at DESC, t.id DESC LIMIT $2`,
          [a.id, PROFILE_LIST],
        )
      : Promise.resolve([]),
    rows<{ id: string; name: string }>(
      deps.ds,
      // From the participant's rows to its workspaces (issue 60): two EXISTS per public workspace cost
      // 1.9 s at 10,000 workspaces (bench/scale), this a few ms.
      `SELECT w.id, w.name FROM workspaces w
        WHERE w.public AND w.id IN (SELECT s.workspace_id FROM participant_stats s WHERE s.agent_id = $1
                                    UNION SELECT p.workspace_id FROM positions p JOIN markets mk ON mk.id = p.market_id AND mk.status IN ('open','closed')
                                           WHERE p.agent_id = $1)
        ORDER BY w.name, w.id`,
      [a.id],
    ),
    privateView ? rows<{ address: string }>(deps.ds, `SELECT address FROM agent_wallets WHERE agent_id = $1`, [a.id]) : Promise.resolve([]),
  ]);

  // Each position and trade as the viewer's policy in its workspace judges it (a public workspace's
  // Public group narrows too): a hidden metric's books, and a proposal hidden with its metrics, stay out.
  const rowsWs = new Map<string, { id: string; public: boolean; ownerId: string | null }>();
  for (const r of [...openRows, ...trades]) rowsWs.set(r.workspace_id, { id: r.workspace_id, public: r.ws_public, ownerId: r.ws_owner });
  const rowPolicies = policies === 'all' ? null : await readPoliciesIn(deps, viewer, [...rowsWs.values()]);
  const shown = async <T extends InWorkspace>(list: T[]) =>
    rowPolicies ? readableRowsIn(deps, rowPolicies, list, (r) => ({ workspaceId: r.workspace_id, metricId: r.metric_id, proposalId: r.proposal_id })) : list;
  const [shownOpen, shownTrades] = await Promise.all([shown(openRows), shown(trades)]);

  const botIds = children.map((c) => c.id);
  const [totals, rank] = await Promise.all([publicTotals(deps.ds, [a.id, ...botIds], hiddenMetricIds), earningsRank(deps.ds, a.id, hiddenMetricIds)]);
  const mine = totals.get(a.id)!;

  // Balance history: the newest ledger movements, walked back from the current balance (oldest first).
  const balance = BigInt(a.balance);
  let running = balance;
  const balanceHistory: Array<{ at: Date; balance: bigint }> = [];
  for (const e of history) {
    balanceHistory.push({ at: e.created_at, balance: running });
    running -= BigInt(e.amount);
  }
  balanceHistory.reverse();

  // Profit per resolved book and the cumulative settled earnings after it (oldest first): the
  // cumulative of the newest equals the aggregate's settled total.
  let cumulative = mine.earnings.settled;
  const pnl: Array<{ at: Date; profit: bigint; cumulative: bigint }> = [];
  for (const r of results) {
    pnl.push({ at: r.resolved_at, profit: BigInt(r.settled), cumulative });
    cumulative -= BigInt(r.settled);
  }
  pnl.reverse();

  const bots: Array<{ id: string; nickname: string; parentId: string; totalEarnings: bigint; totalTrades: number }> = children.map((c) => {
    const t = totals.get(c.id)!;
    return { id: c.id, nickname: c.nickname, parentId: c.parent_id, totalEarnings: t.earnings.total, totalTrades: t.trades };
  });

  return {
    id: a.id,
    nickname: a.nickname,
    intent: a.intent,
    bio: a.bio,
    joinedAt: a.created_at,
    parent: (parent[0] as Named | undefined) ?? null,
    children: children.map((c): Named => ({ id: c.id, nickname: c.nickname })),
    balance,
    balanceHistory,
    profitHistory: pnl.map((p) => ({ at: p.at, profit: p.profit })),
    pnlHistory: pnl.map((p) => ({ at: p.at, cumulative: p.cumulative })),
    stats: { ...mine, rank, scores: scoresOf(mine.sums) } as ProfileStats,
    activeWorkspaces: workspaces,
    openPositions: shownOpen.map((r) => ({ r, mk: rowToMarket(r) })).map(({ r, mk }) => {
      const sharesHigher = BigInt(r.shares_higher);
      const sharesLower = BigInt(r.shares_lower);
      const p = mk.funded && mk.b > 0n ? probability({ qHigher: mk.qHigher, qLower: mk.qLower, b: mk.b }) : null;
      return {
        workspaceId: mk.workspaceId,
        workspaceName: r.workspace_name,
        workspaceSlug: r.workspace_slug,
        marketId: mk.id,
        proposalId: mk.proposalId,
        proposalTitle: r.proposal_title ?? null,
        metricName: mk.metricName,
        targetDate: mk.targetDate,
        direction: sharesHigher > 0n ? ('higher' as const) : sharesLower > 0n ? ('lower' as const) : null,
        shares: sharesHigher > 0n ? sharesHigher : sharesLower,
        sharesHigher,
        sharesLower,
        netCost: BigInt(r.net_cost),
        /** At the consensus mark (zero worth without liquidity), as openEarnings counts it. */
        worth: markAtConsensus({ sharesHigher, sharesLower, netCost: 0n, probability: p }),
        probability: p,
        status: displayStatus(mk, now),
        consensus: p === null ? null : consensusOf(p, mk.rangeMin, mk.rangeMax),
        actualValue: mk.resolvedValue,
      };
    }),
    recentTrades: shownTrades.map((t) => ({
      id: t.id,
      workspaceId: t.workspace_id,
      workspaceName: t.workspace_name,
      workspaceSlug: t.workspace_slug,
      marketId: t.market_id,
      proposalId: t.proposal_id ?? null,
      proposalTitle: t.proposal_title ?? null,
      metricName: t.metric_name,
      targetDate: t.target_date,
      direction: t.kind === 'redeem' ? null : t.direction,
      kind: t.kind,
      shares: BigInt(t.shares),
      cost: BigInt(t.cost),
      consensusBefore: t.consensus_before,
      consensusAfter: t.consensus_after,
      createdAt: t.created_at,
    })),
    transfers: transfers.map((t) => ({
      id: t.id,
      direction: t.from_agent === a.id ? ('out' as const) : ('in' as const),
      counterparty: t.counterparty_id ? { id: t.counterparty_id, nickname: t.counterparty_nickname as string } : null,
      amount: BigInt(t.amount),
      memo: t.memo ?? null,
      createdAt: t.created_at,
    })),
    bots,
    withBotsEarnings: bots.length ? bots.reduce((s, b) => s + b.totalEarnings, mine.earnings.total) : null,
    bot: a.parent_id !== null,
    // Who runs it: the owner's nickname (its operator's contact address stays private).
    runBy: (owner[0] as Named | undefined)?.nickname ?? null,
    model: null as string | null,
    owner: (owner[0] as Named | undefined) ?? null,
    private: privateView ? { walletAddress: (wallet[0] as { address: string } | undefined)?.address ?? null, notifications: switchesOf(a.notifications) } : null,
  };
}

export type PublicProfile = Awaited<ReturnType<typeof publicProfile>>;

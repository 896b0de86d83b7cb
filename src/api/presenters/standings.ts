import { scoresOf } from '../../domain/calibration';
import { toCredits } from '../../domain/money';
import type { LeaderboardRow, marketplaceStats, PublicProfile, SeasonRow, standingsOf } from '../../services/standings';

/** Standings (issue 23): nano-credits become credits here, dates ISO strings. */
const iso = (d: Date) => d.toISOString();

export function presentPublicProfile(p: PublicProfile) {
  const s = p.stats;
  return {
    id: p.id,
    nickname: p.nickname,
    intent: p.intent,
    bio: p.bio,
    joinedAt: iso(p.joinedAt),
    parent: p.parent,
    children: p.children,
    balance: toCredits(p.balance),
    balanceHistory: p.balanceHistory.map((h) => ({ at: iso(h.at), balance: toCredits(h.balance) })),
    profitHistory: p.profitHistory.map((h) => ({ at: iso(h.at), profit: toCredits(h.profit) })),
    pnlHistory: p.pnlHistory.map((h) => ({ at: iso(h.at), cumulative: toCredits(h.cumulative) })),
    stats: {
      rank: s.rank,
      calibration: s.scores.calibration,
      accuracy: s.scores.accuracy,
      brier: s.scores.brier,
      meanAbsError: s.scores.meanAbsError,
      scoredTrades: s.scores.forecasts,
      calibrationBins: s.scores.reliability,
      totalEarnings: toCredits(s.earnings.total),
      settledEarnings: toCredits(s.earnings.settled),
      openEarnings: toCredits(s.earnings.open),
      resolvedMarkets: s.resolvedMarkets,
      totalTrades: s.trades,
      tradedVolume: toCredits(s.volume),
      lastTradeAt: s.lastTradeAt ? iso(s.lastTradeAt) : null,
    },
    activeWorkspaces: p.activeWorkspaces,
    openPositions: p.openPositions.map((o) => {
      const worth = o.worth;
      return {
        workspaceId: o.workspaceId,
        workspaceName: o.workspaceName,
        workspaceSlug: o.workspaceSlug,
        marketId: o.marketId,
        proposalId: o.proposalId,
        proposalTitle: o.proposalTitle,
        metricName: o.metricName,
        targetDate: o.targetDate,
        direction: o.direction,
        shares: toCredits(o.shares),
        totalCost: toCredits(o.netCost),
        worth: toCredits(worth),
        profit: toCredits(worth - o.netCost),
        status: o.status,
        probabilityHigher: o.probability,
        consensus: o.consensus,
        actualValue: o.actualValue,
      };
    }),
    recentTrades: p.recentTrades.map((t) => ({
      id: t.id,
      workspaceId: t.workspaceId,
      workspaceName: t.workspaceName,
      workspaceSlug: t.workspaceSlug,
      marketId: t.marketId,
      proposalId: t.proposalId,
      proposalTitle: t.proposalTitle,
      metricName: t.metricName,
      targetDate: t.targetDate,
      direction: t.direction,
      kind: t.kind,
      shares: toCredits(t.shares),
      cost: toCredits(t.cost),
      price: t.kind === 'redeem' || t.shares === 0n ? null : Math.abs(Number(t.cost) / Number(t.shares)),
      consensusBefore: t.consensusBefore,
      consensusAfter: t.consensusAfter,
      createdAt: iso(t.createdAt),
    })),
    transfers: p.transfers.map((t) => ({ id: t.id, direction: t.direction, counterparty: t.counterparty, credits: toCredits(t.amount), memo: t.memo, createdAt: iso(t.createdAt) })),
    bots: p.bots.map((b) => ({ id: b.id, nickname: b.nickname, parentId: b.parentId, totalEarnings: toCredits(b.totalEarnings), totalTrades: b.totalTrades })),
    withBotsEarnings: p.withBotsEarnings === null ? null : toCredits(p.withBotsEarnings),
    bot: p.bot,
    runBy: p.runBy,
    model: p.model,
    owner: p.owner,
    ...(p.private ? { walletAddress: p.private.walletAddress, notifications: p.private.notifications } : {}),
  };
}

export function presentLeaderboardRow(r: LeaderboardRow) {
  const s = scoresOf(r.sums);
  return {
    rank: r.rank,
    agent: { id: r.agentId, nickname: r.nickname },
    bot: r.bot,
    earnings: toCredits(r.settled),
    calibration: s.calibration,
    accuracy: s.accuracy,
    volume: toCredits(r.volume),
    resolvedMarkets: r.resolvedMarkets,
    trades: r.trades,
  };
}

export function presentSeason(s: SeasonRow) {
  return { id: s.id, name: s.name, startsAt: iso(s.startsAt), endsAt: iso(s.endsAt), status: s.status };
}

export function presentLeaderboard(b: Awaited<ReturnType<typeof standingsOf>>) {
  return {
    season: b.season ? presentSeason(b.season) : null,
    workspaceId: b.workspaceId,
    metricId: b.metricId,
    sort: b.sort,
    minResolvedMarkets: b.minResolvedMarkets,
    total: b.total,
    limit: b.limit,
    offset: b.offset,
    rows: b.rows.map(presentLeaderboardRow),
  };
}

export function presentSeasonStandings(s: { season: SeasonRow; standings: Awaited<ReturnType<typeof standingsOf>> }) {
  return { ...presentSeason(s.season), frozen: s.season.status === 'ended', standings: presentLeaderboard(s.standings) };
}

export function presentMarketplaceStats(s: Awaited<ReturnType<typeof marketplaceStats>>) {
  return {
    overall: { ...s.overall, volume: toCredits(s.overall.volume), asOf: s.overall.asOf.toISOString() },
    workspaces: s.workspaces.map((w) => ({ ...w, volume: toCredits(w.volume) })),
    nextCursor: s.nextCursor,
  };
}

/**
 * The route table (issue 67): every route as a value, named mechanically from its method and path
 * (GET /agents/:id/balance is getAgentsByIdBalance; test/unit/routeTable.test.ts holds the rule).
 * Pages, tools and tests call a route by its value (callRoute, apiRead, apiAct), never by its path.
 * Importing this module registers every route: the router, GET /help and OpenAPI read the registry.
 */
// GET /help is generated from the same registry.
export {
  getHelp,
  getPublicConfig,
  getGuides,
  getGuidesCategories,
  getGuidesBySection,
  getOpenapiJson,
} from './help';
// credits before agents: its static /agents/... paths must win over /agents/:id.
export {
  postAgentsTransfer,
  getAgentsTransfers,
  getAgentsSignupGrant,
  postAgentsSignupGrant,
  getAgentsDepositAddress,
  getAgentsTreasury,
  postAgentsWithdrawalsByIdApprove,
  postAgentsWithdrawalsByIdReject,
  postAgentsByIdCredit,
  postAgentsByIdSpend,
  putAgentsByIdWallet,
  postAgentsByIdDeposit,
  getAgentsByIdDeposits,
  getAgentsByIdDepositsByDepositId,
  postAgentsByIdWithdraw,
  getAgentsByIdWithdrawals,
  getAgentsByIdLedger,
} from './credits';
export {
  postAgentsRegister,
  getAgentsMe,
  getAgentsById,
  getAgentsByIdBalance,
} from './agents';
export {
  postWorkspaces,
  getWorkspacesCurrent,
  getMarketplaceWorkspacesPublic,
  postMarketplaceByWorkspaceIdJoin,
  deleteWorkspacesCurrentMembersByAgentId,
  patchWorkspacesById,
  deleteWorkspacesById,
  getWorkspacesByIdViewLink,
  deleteWorkspacesByIdViewLink,
  getWorkspaces,
} from './workspaces';
export {
  postPredictionsOrders,
  getPredictionsOrders,
  getPredictionsOrdersById,
  deletePredictionsOrdersById,
  getPredictionsMarketsByIdOrderbook,
} from './orders';
export {
  getPredictionsMarkets,
  getPredictionsMarketsById,
  getPredictionsMarketsByIdHistory,
  postPredictionsTrade,
  postPredictionsMarketsByIdTrade,
  postPredictionsMarketsByIdFund,
  postPredictionsMarkets,
  postPredictionsMarketsByIdVoid,
} from './markets';
export {
  getAgentsByIdTrades,
  getAgentsByIdPositions,
  getAgentsByIdMarketPnl,
  getAgentsByIdDashboard,
} from './portfolio';
export {
  getMetrics,
  postMetrics,
  postMetricsReorder,
  postMetricsMigrateLeafTypes,
  postMetricsLogsPurge,
  getMetricsById,
  putMetricsById,
  deleteMetricsById,
  getMetricsByIdLogs,
  postMetricsByIdLogsBackfill,
  getUpdates,
} from './metrics';
export {
  getStatus,
  getHealth,
} from './status';
export {
  getGroups,
  getGroupsById,
  postGroups,
  putGroupsById,
  deleteGroupsById,
  postGroupsByIdMembers,
  deleteGroupsByIdMembersByAgentId,
} from './groups';
export {
  getAgentsByIdKeys,
  postAgentsByIdKeys,
  patchAgentsByIdKeysByKeyId,
  deleteAgentsByIdKeysByKeyId,
} from './keys';
export {
  postAgents,
  getAgentsMine,
  getAgents,
  deleteAgentsById,
} from './participants';
export {
  getAgentsByIdPublic,
  getLeaderboard,
  getSeasons,
  getSeasonsById,
  postSeasons,
  putSeasonsById,
  getMarketplaceStats,
  getBenchmark,
} from './standings';
export {
  postOnboard,
  getOnboardClaimByToken,
  postOnboardClaim,
  postWaitlist,
  getOnboardTemplates,
} from './onboarding';
export {
  deleteAuthMe,
  postAuthSignUpEmail,
  postAuthSignInEmail,
  postAuthSignOut,
  getAuthGetSession,
  postAuthRequestPasswordReset,
  postAuthResetPassword,
} from './accounts';
export {
  getConnections,
  getConnectionsByIdCalls,
  putConnectionsByIdAsk,
  deleteConnectionsById,
} from './connections';
export {
  postMetricsByIdSettle,
  postPredictionsMarketsRefresh,
  postPredictionsResolve,
} from './lifecycle';
export {
  postProposals,
  getProposals,
  getProposalsScorecard,
  getProposalsById,
  postProposalsByIdApprove,
  postProposalsByIdDecline,
  postProposalsByIdWithdraw,
  postProposalsByIdComments,
  getProposalsByIdComments,
} from './proposals';
export {
  getEvents,
  getEventsStream,
} from './events';
export {
  postHooks,
  getHooks,
  getHooksById,
  patchHooksById,
  deleteHooksById,
  postHooksByIdRotateSecret,
  postHooksByIdTest,
  getHooksByIdDeliveries,
  postHooksByIdDeliveriesByDeliveryIdRetry,
  postHooksByIdReplay,
  getAgentsByIdNotifications,
  putAgentsByIdNotifications,
} from './hooks';
export {
  getDataRoomActions,
} from './dataRoom';
export {
  postFeedback,
  getFeedback,
} from './feedback';
export {
  postTelemetryHeartbeat,
  postTelemetryDecisions,
  getTelemetryAgents,
  getTelemetrySilent,
  getTelemetryAgentsByAgentIdHeartbeats,
  getTelemetryAgentsByAgentIdDecisions,
  getTelemetryDecisions,
} from './telemetry';
export {
  getSources,
  postSources,
  getSourcesById,
  putSourcesById,
  deleteSourcesById,
  getSourcesByIdText,
  getSourcesByIdTree,
  getSourcesByIdFile,
} from './sources';
export {
  getDeletionsById,
} from './deletions';
export {
  getTrackRecord,
  getTrackRecordCsv,
} from './trackRecord';

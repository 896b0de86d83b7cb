/**
 * One owner per table: only files under src/services/<owner>/ write the table (`npm run check:tables`
 * enforces it). Another area that must change the table calls the owner's use case, or, where one
 * statement must span areas for speed, composes a SQL fragment the owner exports (as the trade batch
 * composes the ledger's and the outbox's). Reading is free; see docs/architecture.md.
 */
export const TABLE_OWNERS: Readonly<Record<string, string>> = {
  // identity: who an agent is and how it authenticates
  agents: 'identity',
  api_keys: 'identity',
  agent_heartbeats: 'telemetry',
  decision_traces: 'telemetry',
  // ledger: money that has moved
  accounts: 'ledger',
  ledger_entries: 'ledger',
  transfers: 'credits',
  // credits: money entering and leaving
  agent_wallets: 'credits',
  deposit_logs: 'credits',
  deposits: 'credits',
  withdrawals: 'credits',
  // idempotency: the Idempotency-Keys of money writes that have no row of their own (a leaf every area may call)
  money_requests: 'idempotency',
  // books: markets and their order books
  markets: 'books',
  market_funders: 'books',
  limit_orders: 'books',
  // trading: what traders hold and did
  positions: 'trading',
  trade_requests: 'trading',
  trades: 'trading',
  // participants and workspaces
  claim_tokens: 'participants',
  waitlist: 'participants',
  workspaces: 'workspaces',
  memberships: 'workspaces',
  groups: 'workspaces',
  group_members: 'workspaces',
  view_links: 'access',
  settings: 'workspaces',
  workspace_refreshes: 'lifecycle',
  // proposals and metrics
  proposals: 'proposals',
  proposal_comments: 'proposals',
  proposal_scorecard: 'proposals',
  metrics: 'metrics',
  metric_readings: 'metrics',
  metric_revisions: 'metrics',
  metric_updates: 'metrics',
  data_room_actions: 'dataRoom',
  sources: 'sources',
  source_cache: 'sources',
  // events and hooks
  event_sequencer: 'events',
  outbox: 'events',
  hooks: 'hooks',
  hook_deliveries: 'hooks',
  // standings
  benchmark_stats: 'standings',
  participant_results: 'standings',
  participant_stats: 'standings',
  season_stats: 'standings',
  seasons: 'standings',
  standings_pending: 'standings',
  carries: 'standings',
  // the track record: each decision against what happened (issue 68)
  track_record: 'trackRecord',
  // the rest
  connections: 'connections',
  connection_calls: 'connections',
  deletions: 'deletions',
  feedback: 'feedback',
};

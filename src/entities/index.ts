import { Agent, ApiKey } from './agent';
import { Account, EventSequencer, LedgerEntry, OutboxEvent, Setting } from './ledger';
import { Hook, HookDelivery } from './hooks';
import { Group, GroupMember, Membership, Workspace, WorkspaceRefresh } from './workspace';
import { ClaimToken, ViewLink, WaitlistEntry } from './access';
import { Metric, MetricReading, MetricRevision, MetricUpdate } from './metric';
import { Market, MarketFunder, Position, Trade, TradeRequest } from './market';
import { Proposal, ProposalComment, ProposalScorecardRow } from './proposal';
import { LimitOrder } from './order';
import { FeedbackEntry } from './feedback';
import { Source, SourceCacheEntry } from './source';
import { AgentHeartbeat, DecisionTrace } from './telemetry';
import { Connection, ConnectionCall } from './connection';
import { BenchmarkStats, ParticipantResult, ParticipantStats, Season, SeasonStats, StandingsPending } from './standings';
import { Deletion } from './deletion';
import { DataRoomAction } from './dataRoom';
import { TrackRecordRow } from './trackRecord';
import { AgentWallet, CreditTransfer, Deposit, DepositLog, MoneyRequest, Withdrawal } from './credits';

/** Every entity the data source knows; each area appends its own. */
export const entities = [Market, Position, Trade, TradeRequest, Agent, ApiKey, Workspace, Group, GroupMember, Membership, Account, LedgerEntry, OutboxEvent, Setting, Metric, MetricReading, MetricRevision, MetricUpdate, ViewLink, ClaimToken, WaitlistEntry, Proposal, ProposalComment, ProposalScorecardRow, EventSequencer, Hook, HookDelivery, MoneyRequest, CreditTransfer, AgentWallet, Deposit, DepositLog, Withdrawal, LimitOrder, MarketFunder, Connection, ConnectionCall, ParticipantResult, ParticipantStats, Season, SeasonStats, BenchmarkStats, StandingsPending, FeedbackEntry, AgentHeartbeat, DecisionTrace, WorkspaceRefresh, Source, SourceCacheEntry, Deletion, DataRoomAction, TrackRecordRow];

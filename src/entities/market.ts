import { Check, Column, CreateDateColumn, Entity, Generated, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';
import { Agent } from './agent';
import { Metric } from './metric';
import { Proposal } from './proposal';
import { SqlIndex } from './sqlIndex';
import { Workspace } from './workspace';

/** migrations 1763700003000-Markets (+ markets_proposal_fk in 1763700004000-Proposals, trade_requests.job in 1763700005000-TradeJournal). */
const big = { type: 'bigint' as const, transformer: bigintTransformer };

/** One live book per (metric, date, proposal, branch): spawning is idempotent through markets_live_key. */
@Entity('markets')
@SqlIndex('markets_live_key', `(metric_id, target_date, coalesce(proposal_id, '00000000-0000-0000-0000-000000000000'::uuid), coalesce(branch, ''))`, {
  unique: true,
  where: `status IN ('open','closed')`,
})
@Index('markets_workspace', ['workspaceId', 'status'])
@Index('markets_metric', ['metricId', 'status'])
@Index('markets_proposal', ['proposalId'], { where: 'proposal_id IS NOT NULL' })
@Index('markets_due', ['periodEnd'], { where: `status IN ('open','closed')` })
@Index('markets_ended', ['workspaceId', 'resolvedAt'], { where: 'resolved_at IS NOT NULL' })
@Check('markets_branch_check', `branch IN ('approved','declined')`)
@Check('markets_status_check', `status IN ('open','closed','resolved','voided')`)
export class Market {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'markets_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @ManyToOne(() => Metric, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'metric_id', foreignKeyConstraintName: 'markets_metric_id_fkey' })
  metric?: Metric;
  @Column({ type: 'uuid', name: 'proposal_id', nullable: true }) proposalId!: string | null;
  /** NO ACTION: a proposal with branch books cannot be deleted on its own (money never disappears with it). */
  @ManyToOne(() => Proposal, { onDelete: 'NO ACTION' })
  @JoinColumn({ name: 'proposal_id', foreignKeyConstraintName: 'markets_proposal_fk' })
  proposal?: Proposal | null;
  @Column({ type: 'text', nullable: true }) branch!: 'approved' | 'declined' | null;
  @Column({ type: 'text', name: 'target_date' }) targetDate!: string;
  @Column({ type: 'text' }) granularity!: string;
  @Column({ type: 'timestamptz', name: 'period_start', nullable: true }) periodStart!: Date | null;
  @Column({ type: 'timestamptz', name: 'period_end', nullable: true }) periodEnd!: Date | null;
  @Column({ type: 'text', name: 'resolves_on' }) resolvesOn!: string;
  @Column({ type: 'text', name: 'horizon_entry', nullable: true }) horizonEntry!: string | null;
  @Column({ type: 'text', nullable: true }) title!: string | null;
  @Column({ type: 'text', default: 'open' }) status!: 'open' | 'closed' | 'resolved' | 'voided';
  @Column({ type: 'double precision', name: 'range_min', default: 0 }) rangeMin!: number;
  @Column({ type: 'double precision', name: 'range_max' }) rangeMax!: number;
  @Column({ type: 'text', name: 'funder_id', nullable: true }) funderId!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'funder_id', foreignKeyConstraintName: 'markets_funder_id_fkey' })
  funder?: Agent | null;
  @Column({ type: 'boolean', default: false }) funded!: boolean;
  @Column({ ...big, default: 0 }) liquidity!: bigint;
  @Column({ ...big, default: 0 }) b!: bigint;
  @Column({ ...big, name: 'q_higher', default: 0 }) qHigher!: bigint;
  @Column({ ...big, name: 'q_lower', default: 0 }) qLower!: bigint;
  @Column({ ...big, name: 'q0_higher', default: 0 }) q0Higher!: bigint;
  @Column({ ...big, name: 'q0_lower', default: 0 }) q0Lower!: bigint;
  @Column({ type: 'double precision', name: 'opened_probability', nullable: true }) openedProbability!: number | null;
  @Column({ type: 'integer', name: 'trade_count', default: 0 }) tradeCount!: number;
  @Column({ ...big, default: 0 }) volume!: bigint;
  @Column({ type: 'timestamptz', name: 'last_trade_at', nullable: true }) lastTradeAt!: Date | null;
  @Column({ type: 'double precision', name: 'resolved_value', nullable: true }) resolvedValue!: number | null;
  @Column({ type: 'timestamptz', name: 'resolved_at', nullable: true }) resolvedAt!: Date | null;
  @Column({ type: 'boolean', name: 'settled_early', default: false }) settledEarly!: boolean;
  @Column({ type: 'text', name: 'close_reason', nullable: true }) closeReason!: string | null;
  @Column({ type: 'timestamptz', name: 'trading_ends_at', nullable: true }) tradingEndsAt!: Date | null;
  @Column({ type: 'text', name: 'void_reason', nullable: true }) voidReason!: string | null;
  /** Opened by hand (POST /predictions/markets): the horizon pass never retires it (migrations 1764109400000-ManualMarkets). */
  @Column({ type: 'boolean', default: false }) manual!: boolean;
  /** The reason given to POST /metrics/{id}/settle (migrations 1764109100000-DataRoom). */
  @Column({ type: 'text', name: 'settle_reason', nullable: true }) settleReason!: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

/** migrations 1763900000000-MarketFunders: who funded a book with how much; the pool's remainder goes back pro rata. */
@Entity('market_funders')
@Index('market_funders_market', ['marketId', 'id'])
@Check('market_funders_amount_check', 'amount > 0')
export class MarketFunder {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @ManyToOne(() => Market, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'market_id', foreignKeyConstraintName: 'market_funders_market_id_fkey' })
  market?: Market;
  /** Null once the participant is deleted: its share goes to the treasury. */
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'market_funders_agent_id_fkey' })
  agent?: Agent | null;
  @Column({ ...big }) amount!: bigint;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

@Entity('positions')
@Index('positions_agent', ['agentId'])
@Check('positions_shares_higher_check', 'shares_higher >= 0')
@Check('positions_shares_lower_check', 'shares_lower >= 0')
export class Position {
  @PrimaryColumn({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @ManyToOne(() => Market, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'market_id', foreignKeyConstraintName: 'positions_market_id_fkey' })
  market?: Market;
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'positions_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ ...big, name: 'shares_higher', default: 0 }) sharesHigher!: bigint;
  @Column({ ...big, name: 'shares_lower', default: 0 }) sharesLower!: bigint;
  @Column({ ...big, name: 'net_cost', default: 0 }) netCost!: bigint;
  @Column({ ...big, nullable: true }) payout!: bigint | null;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

@Entity('trades')
@Index('trades_market', ['marketId', 'seq'])
@SqlIndex('trades_agent', '(agent_id, seq DESC)')
@Check('trades_kind_check', `kind IN ('buy','sell','redeem')`)
@Check('trades_direction_check', `direction IN ('higher','lower')`)
export class Trade {
  @PrimaryGeneratedColumn('uuid') id!: string;
  /** bigserial: the global order of trades. */
  @Column({ type: 'bigint' }) @Generated('increment') seq!: string;
  @Column({ type: 'text', name: 'request_id', nullable: true }) requestId!: string | null;
  @Column({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @ManyToOne(() => Market, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'market_id', foreignKeyConstraintName: 'trades_market_id_fkey' })
  market?: Market;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'trades_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'text' }) kind!: 'buy' | 'sell' | 'redeem';
  @Column({ type: 'text', nullable: true }) direction!: 'higher' | 'lower' | null;
  @Column({ ...big }) shares!: bigint;
  @Column({ ...big }) cost!: bigint;
  @Column({ type: 'double precision', name: 'probability_before' }) probabilityBefore!: number;
  @Column({ type: 'double precision', name: 'probability_after' }) probabilityAfter!: number;
  @Column({ type: 'double precision', name: 'consensus_before' }) consensusBefore!: number;
  @Column({ type: 'double precision', name: 'consensus_after' }) consensusAfter!: number;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

/** The outcome of every trade request, by request id (= job id): replays and the API's fallback read. */
@Entity('trade_requests')
@Index('trade_requests_idem', ['agentId', 'workspaceId', 'idempotencyKey'], { unique: true, where: 'idempotency_key IS NOT NULL' })
@SqlIndex('trade_requests_age', 'USING brin (created_at)')
@Index('trade_requests_pending', ['createdAt'], { where: `status = 'pending'` })
@Check('trade_requests_status_check', `status IN ('pending','done','failed')`)
export class TradeRequest {
  @PrimaryColumn({ type: 'text', name: 'request_id' }) requestId!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text', name: 'idempotency_key', nullable: true }) idempotencyKey!: string | null;
  @Column({ type: 'text', name: 'body_hash', nullable: true }) bodyHash!: string | null;
  @Column({ type: 'text' }) status!: 'pending' | 'done' | 'failed';
  @Column({ type: 'json', nullable: true }) response!: unknown;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  /** The job that applies this request, kept while it is pending so a lost job can be enqueued again (cleared once it is applied). */
  @Column({ type: 'jsonb', nullable: true }) job!: unknown;
  @Column({ type: 'timestamptz', name: 'recovered_at', nullable: true }) recoveredAt!: Date | null;
}

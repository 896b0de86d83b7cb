import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';

const big = { type: 'bigint' as const, transformer: bigintTransformer };

@Entity('markets')
export class Market {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'uuid', name: 'proposal_id', nullable: true }) proposalId!: string | null;
  @Column({ type: 'text', nullable: true }) branch!: 'approved' | 'declined' | null;
  @Column({ type: 'text', name: 'target_date' }) targetDate!: string;
  @Column({ type: 'text' }) granularity!: string;
  @Column({ type: 'timestamptz', name: 'period_start', nullable: true }) periodStart!: Date | null;
  @Column({ type: 'timestamptz', name: 'period_end', nullable: true }) periodEnd!: Date | null;
  @Column({ type: 'text', name: 'resolves_on' }) resolvesOn!: string;
  @Column({ type: 'text', name: 'horizon_entry', nullable: true }) horizonEntry!: string | null;
  @Column({ type: 'text', nullable: true }) title!: string | null;
  @Column({ type: 'text' }) status!: 'open' | 'closed' | 'resolved' | 'voided';
  @Column({ type: 'double precision', name: 'range_min' }) rangeMin!: number;
  @Column({ type: 'double precision', name: 'range_max' }) rangeMax!: number;
  @Column({ type: 'text', name: 'funder_id', nullable: true }) funderId!: string | null;
  @Column({ type: 'boolean' }) funded!: boolean;
  @Column({ ...big }) liquidity!: bigint;
  @Column({ ...big }) b!: bigint;
  @Column({ ...big, name: 'q_higher' }) qHigher!: bigint;
  @Column({ ...big, name: 'q_lower' }) qLower!: bigint;
  @Column({ ...big, name: 'q0_higher' }) q0Higher!: bigint;
  @Column({ ...big, name: 'q0_lower' }) q0Lower!: bigint;
  @Column({ type: 'double precision', name: 'opened_probability', nullable: true }) openedProbability!: number | null;
  @Column({ type: 'integer', name: 'trade_count' }) tradeCount!: number;
  @Column({ ...big }) volume!: bigint;
  @Column({ type: 'timestamptz', name: 'last_trade_at', nullable: true }) lastTradeAt!: Date | null;
  @Column({ type: 'double precision', name: 'resolved_value', nullable: true }) resolvedValue!: number | null;
  @Column({ type: 'timestamptz', name: 'resolved_at', nullable: true }) resolvedAt!: Date | null;
  @Column({ type: 'boolean', name: 'settled_early' }) settledEarly!: boolean;
  @Column({ type: 'text', name: 'close_reason', nullable: true }) closeReason!: string | null;
  @Column({ type: 'text', name: 'void_reason', nullable: true }) voidReason!: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt!: Date;
}

@Entity('positions')
export class Position {
  @PrimaryColumn({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ ...big, name: 'shares_higher' }) sharesHigher!: bigint;
  @Column({ ...big, name: 'shares_lower' }) sharesLower!: bigint;
  @Column({ ...big, name: 'net_cost' }) netCost!: bigint;
  @Column({ ...big, nullable: true }) payout!: bigint | null;
}

@Entity('trades')
export class Trade {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'bigint' }) seq!: string;
  @Column({ type: 'text', name: 'request_id', nullable: true }) requestId!: string | null;
  @Column({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @Column({ type: 'text' }) kind!: 'buy' | 'sell' | 'redeem';
  @Column({ type: 'text', nullable: true }) direction!: 'higher' | 'lower' | null;
  @Column({ ...big }) shares!: bigint;
  @Column({ ...big }) cost!: bigint;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

@Entity('trade_requests')
export class TradeRequest {
  @PrimaryColumn({ type: 'text', name: 'request_id' }) requestId!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text', name: 'idempotency_key', nullable: true }) idempotencyKey!: string | null;
  @Column({ type: 'text', name: 'body_hash', nullable: true }) bodyHash!: string | null;
  @Column({ type: 'text' }) status!: 'pending' | 'done' | 'failed';
  @Column({ type: 'integer', name: 'http_status', nullable: true }) httpStatus!: number | null;
  @Column({ type: 'jsonb', nullable: true }) response!: unknown;
  /** The job that applies this request, kept so a lost job can be enqueued again. */
  @Column({ type: 'jsonb', nullable: true }) job!: unknown;
  @Column({ type: 'timestamptz', name: 'recovered_at', nullable: true }) recoveredAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt!: Date;
}

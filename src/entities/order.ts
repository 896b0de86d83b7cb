import { Check, Column, Entity, Generated, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { bigintTransformer } from '../db/transformers';
import { Agent } from './agent';
import { Market } from './market';

/** migrations 1763800300000-LimitOrders. */
const big = { type: 'bigint' as const, transformer: bigintTransformer };

/** A resting buy order: a wall at its limit on its market (see domain/orderBook). */
@Entity('limit_orders')
@Unique('limit_orders_seq_key', ['seq'])
@Index('limit_orders_book', ['marketId', 'direction', 'limitP'], { where: `status = 'open'` })
@Index('limit_orders_market', ['marketId'])
@Index('limit_orders_agent', ['agentId', 'workspaceId', 'seq'])
@Index('limit_orders_expiry', ['expiresAt'], { where: `status = 'open' AND expires_at IS NOT NULL` })
@Index('limit_orders_idempotency', ['agentId', 'workspaceId', 'idempotencyKey'], { unique: true, where: 'idempotency_key IS NOT NULL' })
@Check('limit_orders_direction_check', `direction IN ('higher','lower')`)
@Check('limit_orders_status_check', `status IN ('open','filled','cancelled','expired')`)
@Check('limit_orders_fill_check', 'filled >= 0 AND filled <= shares AND reserve >= 0')
export class LimitOrder {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  /** bigserial: time priority among orders at one price. */
  @Column({ type: 'bigint' }) @Generated('increment') seq!: string;
  @Column({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @ManyToOne(() => Market, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'market_id', foreignKeyConstraintName: 'limit_orders_market_id_fkey' })
  market?: Market;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'limit_orders_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'text' }) direction!: 'higher' | 'lower';
  @Column({ type: 'double precision', name: 'limit_value' }) limitValue!: number;
  @Column({ type: 'double precision', name: 'limit_p' }) limitP!: number;
  @Column({ ...big, name: 'price_nano' }) priceNano!: bigint;
  @Column({ ...big }) shares!: bigint;
  @Column({ ...big, default: 0 }) filled!: bigint;
  /** Shares bought against the book when placed (part of filled; the wall's own fills are filled - immediate). */
  @Column({ ...big, default: 0 }) immediate!: bigint;
  @Column({ ...big, default: 0 }) spent!: bigint;
  @Column({ ...big, default: 0 }) reserve!: bigint;
  @Column({ type: 'text', default: 'open' }) status!: 'open' | 'filled' | 'cancelled' | 'expired';
  @Column({ type: 'text', name: 'close_reason', nullable: true }) closeReason!: string | null;
  @Column({ type: 'timestamptz', name: 'expires_at', nullable: true }) expiresAt!: Date | null;
  @Column({ type: 'text', name: 'idempotency_key', nullable: true }) idempotencyKey!: string | null;
  @Column({ type: 'text', name: 'body_hash', nullable: true }) bodyHash!: string | null;
  @Column({ type: 'jsonb', nullable: true }) placement!: unknown;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

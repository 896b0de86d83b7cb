import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';

/** migrations 1763700000000-Foundation. */
export type AccountKind = 'participant' | 'pool' | 'issuance' | 'treasury';

/** One balance per account; participant and pool balances can never go negative. */
@Entity('accounts')
@Check('accounts_kind_check', `kind IN ('participant','pool','issuance','treasury')`)
@Check('accounts_no_overdraft', `kind NOT IN ('participant','pool') OR balance >= 0`)
export class Account {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text' }) kind!: AccountKind;
  @Column({ type: 'bigint', transformer: bigintTransformer, default: 0 }) balance!: bigint;
}

/** Double entry: every transfer_id's rows sum to zero. */
@Entity('ledger_entries')
@Index('ledger_entries_account', ['accountId', 'id'])
export class LedgerEntry {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'transfer_id' }) transferId!: string;
  @Column({ type: 'text', name: 'account_id' }) accountId!: string;
  @ManyToOne(() => Account, { onDelete: 'NO ACTION', nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'ledger_entries_account_id_fkey' })
  account?: Account;
  @Column({ type: 'bigint', transformer: bigintTransformer }) amount!: bigint;
  @Column({ type: 'text' }) kind!: string;
  @Column({ type: 'text', nullable: true }) ref!: string | null;
  @Column({ type: 'text', nullable: true }) memo!: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

/** Events written in the transaction that causes them, relayed after commit (no FK: outlives its workspace). */
@Entity('outbox')
@Index('outbox_unpublished', ['id'], { where: 'published_at IS NULL' })
@Index('outbox_seq', ['seq'], { unique: true, where: 'seq IS NOT NULL' })
@Index('outbox_workspace_seq', ['workspaceId', 'seq'], { where: 'seq IS NOT NULL' })
export class OutboxEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id', nullable: true }) workspaceId!: string | null;
  @Column({ type: 'text' }) type!: string;
  @Column({ type: 'json' }) data!: Record<string, unknown>;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'published_at', nullable: true }) publishedAt!: Date | null;
  /** Position in the event log, set by the sequencer after commit (migration 1763800200000). */
  @Column({ type: 'bigint', nullable: true }) seq!: string | null;
  /** The one participant this event is for (null: everyone who sees the workspace). */
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId!: string | null;
}

@Entity('event_sequencer')
export class EventSequencer {
  @PrimaryColumn({ type: 'integer' }) id!: number;
  @Column({ type: 'bigint', name: 'last_seq' }) lastSeq!: string;
}

@Entity('settings')
export class Setting {
  @PrimaryColumn({ type: 'text' }) key!: string;
  @Column({ type: 'jsonb' }) value!: unknown;
}

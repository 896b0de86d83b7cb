import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';

export type AccountKind = 'participant' | 'pool' | 'issuance' | 'treasury';

/** One balance per account; participant balances can never go negative (CHECK in the migration). */
@Entity('accounts')
export class Account {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text' }) kind!: AccountKind;
  @Column({ type: 'bigint', transformer: bigintTransformer, default: 0 }) balance!: bigint;
}

/** Double entry: every transfer_id's rows sum to zero. */
@Entity('ledger_entries')
export class LedgerEntry {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'transfer_id' }) transferId!: string;
  @Column({ type: 'text', name: 'account_id' }) accountId!: string;
  @Column({ type: 'bigint', transformer: bigintTransformer }) amount!: bigint;
  @Column({ type: 'text' }) kind!: string;
  @Column({ type: 'text', nullable: true }) ref!: string | null;
  @Column({ type: 'text', nullable: true }) memo!: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

@Entity('outbox')
export class OutboxEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id', nullable: true }) workspaceId!: string | null;
  @Column({ type: 'text' }) type!: string;
  @Column({ type: 'jsonb' }) data!: Record<string, unknown>;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'published_at', nullable: true }) publishedAt!: Date | null;
}

@Entity('settings')
export class Setting {
  @PrimaryColumn({ type: 'text' }) key!: string;
  @Column({ type: 'jsonb' }) value!: unknown;
}

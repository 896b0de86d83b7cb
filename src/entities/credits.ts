import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { bigintTransformer } from '../db/transformers';
import { Agent } from './agent';

/** migrations 1763800100000-Credits. */

/** The Idempotency-Key journal of money moves other than trades, written in the move's transaction. */
@Entity('money_requests')
@Index('money_requests_age', ['createdAt'])
export class MoneyRequest {
  @PrimaryColumn({ type: 'text', name: 'participant_id' }) participantId!: string;
  @PrimaryColumn({ type: 'text' }) scope!: string;
  @PrimaryColumn({ type: 'text', name: 'idempotency_key' }) idempotencyKey!: string;
  @Column({ type: 'text', name: 'body_hash' }) bodyHash!: string;
  @Column({ type: 'jsonb', nullable: true }) outcome!: unknown;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

/** Participant-to-participant transfers (spec §2.12); the money itself is in the ledger. */
@Entity('transfers')
@Index('transfers_from', ['fromAgent', 'createdAt'])
@Index('transfers_to', ['toAgent', 'createdAt'])
@Check('transfers_amount_check', 'amount > 0')
export class CreditTransfer {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ type: 'text', name: 'from_agent' }) fromAgent!: string;
  @Column({ type: 'text', name: 'to_agent' }) toAgent!: string;
  @Column({ type: 'bigint', transformer: bigintTransformer }) amount!: bigint;
  @Column({ type: 'text', nullable: true }) memo!: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

/** The registered wallet (checksummed): deposits must come from it, withdrawals go to it. */
@Entity('agent_wallets')
export class AgentWallet {
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'agent_wallets_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'text' }) address!: string;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

export type DepositStatus = 'pending' | 'credited' | 'rejected' | 'flagged';

@Entity('deposits')
@Unique('deposits_tx', ['chainId', 'txHash'])
@Index('deposits_agent', ['agentId', 'createdAt'])
@Check('deposits_status_check', `status IN ('pending','credited','rejected','flagged')`)
@Index('deposits_open', ['checkedAt'], { where: `status = 'pending' OR (status = 'credited' AND NOT final)` })
export class Deposit {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @Column({ type: 'bigint', name: 'chain_id', transformer: bigintTransformer }) chainId!: bigint;
  @Column({ type: 'text', name: 'tx_hash' }) txHash!: string;
  @Column({ type: 'text' }) status!: DepositStatus;
  @Column({ type: 'text', nullable: true }) reason!: string | null;
  @Column({ type: 'text', name: 'from_address', nullable: true }) fromAddress!: string | null;
  @Column({ type: 'bigint', name: 'amount_units', nullable: true, transformer: bigintTransformer }) amountUnits!: bigint | null;
  @Column({ type: 'bigint', nullable: true, transformer: bigintTransformer }) credits!: bigint | null;
  @Column({ type: 'bigint', nullable: true, transformer: bigintTransformer }) fee!: bigint | null;
  @Column({ type: 'bigint', name: 'block_number', nullable: true, transformer: bigintTransformer }) blockNumber!: bigint | null;
  @Column({ type: 'text', name: 'block_hash', nullable: true }) blockHash!: string | null;
  @Column({ type: 'integer', default: 0 }) checks!: number;
  @Column({ type: 'boolean', default: false }) final!: boolean;
  /** When a verification job last looked at it (the lost-job sweep's clock). */
  @Column({ type: 'timestamptz', name: 'checked_at', nullable: true }) checkedAt!: Date | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', nullable: true }) updatedAt!: Date | null;
}

/** One row per credited Transfer log: the database refuses to credit a (chain, tx, log) twice. */
@Entity('deposit_logs')
export class DepositLog {
  @PrimaryColumn({ type: 'bigint', name: 'chain_id', transformer: bigintTransformer }) chainId!: bigint;
  @PrimaryColumn({ type: 'text', name: 'tx_hash' }) txHash!: string;
  @PrimaryColumn({ type: 'integer', name: 'log_index' }) logIndex!: number;
  @Column({ type: 'uuid', name: 'deposit_id' }) depositId!: string;
  @Column({ type: 'text', name: 'from_address' }) fromAddress!: string;
  @Column({ type: 'bigint', name: 'amount_units', transformer: bigintTransformer }) amountUnits!: bigint;
}

export type WithdrawalStatus = 'review' | 'queued' | 'signed' | 'confirmed' | 'failed' | 'rejected';

@Entity('withdrawals')
@Index('withdrawals_agent', ['agentId', 'createdAt'])
@Index('withdrawals_nonce', ['signer', 'nonce'], { unique: true, where: 'nonce IS NOT NULL' })
@Check('withdrawals_amount_check', 'amount > 0')
@Check('withdrawals_status_check', `status IN ('review','queued','signed','confirmed','failed','rejected')`)
@Index('withdrawals_open', ['checkedAt'], { where: `status IN ('queued','signed')` })
export class Withdrawal {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @Column({ type: 'bigint', transformer: bigintTransformer }) amount!: bigint;
  @Column({ type: 'bigint', transformer: bigintTransformer }) units!: bigint;
  @Column({ type: 'text', name: 'to_address' }) toAddress!: string;
  @Column({ type: 'text' }) status!: WithdrawalStatus;
  @Column({ type: 'text', nullable: true }) reason!: string | null;
  @Column({ type: 'text', nullable: true }) signer!: string | null;
  @Column({ type: 'integer', nullable: true }) nonce!: number | null;
  @Column({ type: 'text', name: 'tx_hash', nullable: true }) txHash!: string | null;
  @Column({ type: 'text', name: 'raw_tx', nullable: true }) rawTx!: string | null;
  @Column({ type: 'bigint', name: 'block_number', nullable: true, transformer: bigintTransformer }) blockNumber!: bigint | null;
  @Column({ type: 'text', name: 'decided_by', nullable: true }) decidedBy!: string | null;
  /** The next check's number (the live job's id carries it) and when a job last looked at it. */
  @Column({ type: 'integer', default: 0 }) checks!: number;
  @Column({ type: 'timestamptz', name: 'checked_at', nullable: true }) checkedAt!: Date | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', nullable: true }) updatedAt!: Date | null;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { SqlIndex } from './sqlIndex';
import { Workspace } from './workspace';

/** migrations 1763700000000-Foundation (+ claimed_by/claimed_at and two indexes in 1763700002000-Access). */
@Entity('agents')
@SqlIndex('agents_nickname_ci', '(lower(nickname))', { unique: true })
@Index('agents_parent', ['parentId'], { where: 'parent_id IS NOT NULL' })
@Index('agents_created_by', ['createdBy'], { where: 'created_by IS NOT NULL' })
@Index('agents_claimed_by', ['claimedBy'], { where: 'claimed_by IS NOT NULL' })
@Unique('agents_account_id_key', ['accountId'])
export class Agent {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text' }) nickname!: string;
  @Column({ type: 'text', nullable: true }) operator!: string | null;
  @Column({ type: 'text', default: '' }) bio!: string;
  @Column({ type: 'text', default: '' }) intent!: string;
  @Column({ type: 'text', nullable: true }) source!: string | null;
  @Column({ type: 'text', name: 'parent_id', nullable: true }) parentId!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'parent_id', foreignKeyConstraintName: 'agents_parent_id_fkey' })
  parent?: Agent | null;
  @Column({ type: 'text', name: 'created_by', nullable: true }) createdBy!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by', foreignKeyConstraintName: 'agents_created_by_fkey' })
  creator?: Agent | null;
  @Column({ type: 'boolean', name: 'is_platform', default: false }) isPlatform!: boolean;
  @Column({ type: 'boolean', default: false }) unclaimed!: boolean;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'text', name: 'claimed_by', nullable: true }) claimedBy!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'claimed_by', foreignKeyConstraintName: 'agents_claimed_by_fkey' })
  claimer?: Agent | null;
  @Column({ type: 'timestamptz', name: 'claimed_at', nullable: true }) claimedAt!: Date | null;
  /** Notification switches (spec §2.7; null: the defaults), migration 1763800200000. */
  @Column({ type: 'jsonb', nullable: true }) notifications!: Record<string, boolean> | null;
  /** The account (auth_users.id, owned by the account system) this participant belongs to; one per account. Migration 1763901000000. */
  @Column({ type: 'text', name: 'account_id', nullable: true }) accountId!: string | null;
}

@Entity('api_keys')
@Unique('api_keys_hash_key', ['hash'])
@Index('api_keys_agent', ['agentId'])
export class ApiKey {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'api_keys_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'text' }) hash!: string;
  @Column({ type: 'text', name: 'hash_prefix' }) hashPrefix!: string;
  @Column({ type: 'text', default: '' }) label!: string;
  @Column({ type: 'text', array: true }) scopes!: string[];
  @Column({ type: 'uuid', name: 'workspace_id', nullable: true }) workspaceId!: string | null;
  @ManyToOne(() => Workspace, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'api_keys_workspace_id_fkey' })
  workspace?: Workspace | null;
  @Column({ type: 'boolean', name: 'workspace_locked', default: false }) workspaceLocked!: boolean;
  @Column({ type: 'boolean', name: 'is_master', default: false }) isMaster!: boolean;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true }) lastUsedAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
}

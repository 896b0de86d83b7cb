import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Agent } from './agent';
import { SqlIndex } from './sqlIndex';
import { Workspace } from './workspace';

/** migrations 1763700002000-Access. */

/** A read-only share link for one workspace (header X-View-Link); at most one active per workspace. */
@Entity('view_links')
@Unique('view_links_token_key', ['token'])
@Index('view_links_one_active', ['workspaceId'], { unique: true, where: 'revoked_at IS NULL' })
export class ViewLink {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'view_links_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'text' }) token!: string;
  @Column({ type: 'text', name: 'created_by', nullable: true }) createdBy!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by', foreignKeyConstraintName: 'view_links_created_by_fkey' })
  creator?: Agent | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
}

/** The claim token of an onboarded (key-first, unclaimed) participant; stored hashed, usable once. */
@Entity('claim_tokens')
@Index('claim_tokens_agent', ['agentId'])
export class ClaimToken {
  @PrimaryColumn({ type: 'text', name: 'token_hash' }) tokenHash!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'claim_tokens_agent_id_fkey' })
  agent?: Agent;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'used_at', nullable: true }) usedAt!: Date | null;
  @Column({ type: 'text', name: 'used_by', nullable: true }) usedBy!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'used_by', foreignKeyConstraintName: 'claim_tokens_used_by_fkey' })
  user?: Agent | null;
}

@Entity('waitlist')
@SqlIndex('waitlist_email_ci', '(lower(email))', { unique: true })
export class WaitlistEntry {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'text' }) email!: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

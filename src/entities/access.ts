import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** A read-only share link for one workspace (header X-View-Link); at most one active per workspace. */
@Entity('view_links')
export class ViewLink {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text' }) token!: string;
  @Column({ type: 'text', name: 'created_by', nullable: true }) createdBy!: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
}

/** The claim token of an onboarded (key-first, unclaimed) participant; stored hashed, usable once. */
@Entity('claim_tokens')
export class ClaimToken {
  @PrimaryColumn({ type: 'text', name: 'token_hash' }) tokenHash!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'used_at', nullable: true }) usedAt!: Date | null;
  @Column({ type: 'text', name: 'used_by', nullable: true }) usedBy!: string | null;
}

@Entity('waitlist')
export class WaitlistEntry {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'text' }) email!: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('agents')
export class Agent {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text' }) nickname!: string;
  @Column({ type: 'text', nullable: true }) operator!: string | null;
  @Column({ type: 'text', default: '' }) bio!: string;
  @Column({ type: 'text', default: '' }) intent!: string;
  @Column({ type: 'text', nullable: true }) source!: string | null;
  @Column({ type: 'text', name: 'parent_id', nullable: true }) parentId!: string | null;
  @Column({ type: 'text', name: 'created_by', nullable: true }) createdBy!: string | null;
  @Column({ type: 'boolean', name: 'is_platform', default: false }) isPlatform!: boolean;
  @Column({ type: 'boolean', default: false }) unclaimed!: boolean;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

@Entity('api_keys')
export class ApiKey {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @Column({ type: 'text' }) hash!: string;
  @Column({ type: 'text', name: 'hash_prefix' }) hashPrefix!: string;
  @Column({ type: 'text', default: '' }) label!: string;
  @Column({ type: 'text', array: true }) scopes!: string[];
  @Column({ type: 'uuid', name: 'workspace_id', nullable: true }) workspaceId!: string | null;
  @Column({ type: 'boolean', name: 'workspace_locked', default: false }) workspaceLocked!: boolean;
  @Column({ type: 'boolean', name: 'is_master', default: false }) isMaster!: boolean;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true }) lastUsedAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
}

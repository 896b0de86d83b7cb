import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';
import { Agent } from './agent';
import { SqlIndex } from './sqlIndex';

/** migrations 1763700000000-Foundation (+ groups_workspace in 1763700002000-Access, workspaces_public_name in 1764111300000-PublicWorkspacePages). */
@Entity('workspaces')
@Index('workspaces_public_name', ['name', 'id'], { where: 'public' })
@SqlIndex('workspaces_slug', '(lower(slug))', { unique: true })
export class Workspace {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'text' }) slug!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'boolean', default: false }) public!: boolean;
  @Column({ type: 'text', name: 'owner_id' }) ownerId!: string;
  @ManyToOne(() => Agent, { onDelete: 'NO ACTION', nullable: false })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'workspaces_owner_id_fkey' })
  owner?: Agent;
  @Column({ type: 'boolean', name: 'external_proposals', default: true }) externalProposals!: boolean;
  @Column({ type: 'bigint', name: 'default_liquidity', transformer: bigintTransformer }) defaultLiquidity!: bigint;
  @Column({ type: 'bigint', name: 'default_proposal_liquidity', transformer: bigintTransformer }) defaultProposalLiquidity!: bigint;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  /** Set when its deletion was accepted (migration 1764109600000): it then resolves to nothing. */
  @Column({ type: 'timestamptz', name: 'deleting_at', nullable: true }) deletingAt!: Date | null;
}

export type MetricPermissions = Record<string, { read?: boolean; trade?: boolean }>;
export type SourcePermissions = Record<string, { read?: boolean }>;

@Entity('groups')
@SqlIndex('groups_name', '(workspace_id, lower(name))', { unique: true })
@Index('groups_workspace', ['workspaceId'])
export class Group {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'groups_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'boolean', default: false }) system!: boolean;
  @Column({ type: 'text', array: true }) capabilities!: string[];
  @Column({ type: 'jsonb', name: 'metric_permissions', default: {} }) metricPermissions!: MetricPermissions;
  @Column({ type: 'jsonb', name: 'source_permissions', default: {} }) sourcePermissions!: SourcePermissions;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

@Entity('group_members')
@Index('group_members_agent', ['agentId'])
export class GroupMember {
  @PrimaryColumn({ type: 'uuid', name: 'group_id' }) groupId!: string;
  @ManyToOne(() => Group, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'group_id', foreignKeyConstraintName: 'group_members_group_id_fkey' })
  group?: Group;
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'group_members_agent_id_fkey' })
  agent?: Agent;
}

@Entity('memberships')
@Index('memberships_agent', ['agentId'])
export class Membership {
  @PrimaryColumn({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'memberships_workspace_id_fkey' })
  workspace?: Workspace;
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'memberships_agent_id_fkey' })
  agent?: Agent;
  @CreateDateColumn({ type: 'timestamptz', name: 'joined_at' }) joinedAt!: Date;
}

/** migrations 1764109400000-ManualMarkets: when the workspace's horizon pass last ran by request (the unforced refresh is throttled to once a minute). */
@Entity('workspace_refreshes')
export class WorkspaceRefresh {
  @PrimaryColumn({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'workspace_refreshes_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'timestamptz', name: 'refreshed_at' }) refreshedAt!: Date;
}

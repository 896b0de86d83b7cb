import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';

@Entity('workspaces')
export class Workspace {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'text' }) slug!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'boolean', default: false }) public!: boolean;
  @Column({ type: 'text', name: 'owner_id' }) ownerId!: string;
  @Column({ type: 'boolean', name: 'external_proposals', default: true }) externalProposals!: boolean;
  @Column({ type: 'bigint', name: 'default_liquidity', transformer: bigintTransformer }) defaultLiquidity!: bigint;
  @Column({ type: 'bigint', name: 'default_proposal_liquidity', transformer: bigintTransformer }) defaultProposalLiquidity!: bigint;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

@Entity('groups')
export class Group {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'boolean', default: false }) system!: boolean;
  @Column({ type: 'text', array: true }) capabilities!: string[];
  @Column({ type: 'jsonb', name: 'metric_permissions', default: {} }) metricPermissions!: Record<string, { read?: boolean; trade?: boolean }>;
  @Column({ type: 'jsonb', name: 'source_permissions', default: {} }) sourcePermissions!: Record<string, { read?: boolean }>;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

@Entity('group_members')
export class GroupMember {
  @PrimaryColumn({ type: 'uuid', name: 'group_id' }) groupId!: string;
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
}

@Entity('memberships')
export class Membership {
  @PrimaryColumn({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'joined_at' }) joinedAt!: Date;
}

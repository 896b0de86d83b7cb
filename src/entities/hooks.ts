import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { Agent } from './agent';
import { Workspace } from './workspace';

/** migrations 1763800200000-EventsAndHooks. */

/** A participant's webhook endpoint in one workspace, and where its in-order delivery stands. */
@Entity('hooks')
@Index('hooks_workspace', ['workspaceId'])
@Index('hooks_agent', ['agentId'])
export class Hook {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'hooks_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'hooks_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'text' }) url!: string;
  /** The QUEUE_PREFIX of the instance that registered it: only that instance's workers deliver it. */
  @Column({ type: 'text', default: '' }) instance!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'jsonb' }) events!: unknown;
  @Column({ type: 'text' }) secret!: string;
  @Column({ type: 'text', name: 'previous_secret', nullable: true }) previousSecret!: string | null;
  @Column({ type: 'timestamptz', name: 'previous_secret_until', nullable: true }) previousSecretUntil!: Date | null;
  /** The last event seq settled for this endpoint (delivered, or passed over by its filters). */
  @Column({ type: 'bigint', name: 'cursor_seq' }) cursorSeq!: string;
  @Column({ type: 'integer', default: 0 }) attempt!: number;
  @Column({ type: 'timestamptz', name: 'next_attempt_at', nullable: true }) nextAttemptAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'failing_since', nullable: true }) failingSince!: Date | null;
  @Column({ type: 'timestamptz', name: 'lease_until', nullable: true }) leaseUntil!: Date | null;
  @Column({ type: 'text', name: 'lease_token', nullable: true }) leaseToken!: string | null;
  @Column({ type: 'timestamptz', name: 'disabled_at', nullable: true }) disabledAt!: Date | null;
  @Column({ type: 'text', name: 'disabled_reason', nullable: true }) disabledReason!: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

/** One delivery attempt of one event to one endpoint. */
@Entity('hook_deliveries')
@Index('hook_deliveries_hook', ['hookId', 'id'])
export class HookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'hook_id' }) hookId!: string;
  @ManyToOne(() => Hook, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'hook_id', foreignKeyConstraintName: 'hook_deliveries_hook_id_fkey' })
  hook?: Hook;
  @Column({ type: 'bigint', name: 'event_seq' }) eventSeq!: string;
  @Column({ type: 'text', name: 'event_type' }) eventType!: string;
  @Column({ type: 'integer' }) attempt!: number;
  @Column({ type: 'text' }) status!: string;
  @Column({ type: 'integer', name: 'http_status', nullable: true }) httpStatus!: number | null;
  @Column({ type: 'integer', name: 'latency_ms' }) latencyMs!: number;
  @Column({ type: 'text', default: '' }) response!: string;
  @Column({ type: 'text', nullable: true }) error!: string | null;
  @Column({ type: 'boolean', default: false }) manual!: boolean;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

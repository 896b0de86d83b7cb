import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { Agent } from './agent';
import { Workspace } from './workspace';

/** migrations 1764109200000-Feedback: one report by a participant (POST /feedback). */
@Entity('feedback')
@Index('feedback_agent', ['agentId'], { where: 'agent_id IS NOT NULL' })
@Check('feedback_message_check', 'length(message) BETWEEN 1 AND 5000')
export class FeedbackEntry {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'feedback_agent_id_fkey' })
  agent?: Agent | null;
  /** The workspace the caller named (X-Workspace-Id), if any. */
  @Column({ type: 'uuid', name: 'workspace_id', nullable: true }) workspaceId!: string | null;
  @ManyToOne(() => Workspace, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'feedback_workspace_id_fkey' })
  workspace?: Workspace | null;
  @Column({ type: 'text' }) message!: string;
  @Column({ type: 'jsonb', nullable: true }) context!: Record<string, unknown> | null;
  @Column({ type: 'text', name: 'request_id', nullable: true }) requestId!: string | null;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt!: Date;
}

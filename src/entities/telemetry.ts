import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';
import { Agent } from './agent';
import { Workspace } from './workspace';

/** migrations 1764109300000-Telemetry: a heartbeat an agent pushed (spec §6). */
@Entity('agent_heartbeats')
@Index('agent_heartbeats_agent', ['workspaceId', 'agentId', 'id'])
@Index('agent_heartbeats_age', ['receivedAt'])
@Check('agent_heartbeats_status_check', `status IN ('ok','idle','degraded','error','stopped')`)
export class AgentHeartbeat {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'agent_heartbeats_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'agent_heartbeats_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'text' }) status!: 'ok' | 'idle' | 'degraded' | 'error' | 'stopped';
  @Column({ type: 'timestamptz', name: 'last_cycle_at', nullable: true }) lastCycleAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'next_cycle_at', nullable: true }) nextCycleAt!: Date | null;
  @Column({ type: 'text', name: 'last_cycle_outcome', nullable: true }) lastCycleOutcome!: string | null;
  /** The balance the agent reported, in nano-units. */
  @Column({ type: 'bigint', nullable: true, transformer: bigintTransformer }) balance!: bigint | null;
  @Column({ type: 'timestamptz', name: 'received_at', default: () => 'now()' }) receivedAt!: Date;
}

/** A decision an agent took on one market in a cycle: trade, skip or error, and why. No FK to markets or trades: the trace outlives them. */
@Entity('decision_traces')
@Index('decision_traces_agent', ['workspaceId', 'agentId', 'id'])
@Index('decision_traces_workspace', ['workspaceId', 'id'])
@Index('decision_traces_age', ['createdAt'])
@Check('decision_traces_outcome_check', `outcome IN ('trade','skip','error')`)
@Check('decision_traces_reasoning_check', 'length(reasoning) <= 500')
export class DecisionTrace {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'decision_traces_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'decision_traces_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @Column({ type: 'text' }) outcome!: 'trade' | 'skip' | 'error';
  @Column({ type: 'text' }) reasoning!: string;
  @Column({ type: 'uuid', name: 'trade_id', nullable: true }) tradeId!: string | null;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt!: Date;
}

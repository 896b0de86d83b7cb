import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SqlIndex } from './sqlIndex';
import { Workspace } from './workspace';

/**
 * migrations 1764109857000-DataRoomLog: the data room's rows, written by triggers in the act's own
 * transaction with the names as they were; a trigger refuses UPDATE, and DELETE except with the
 * workspace. No FK to metrics, proposals or books, so a row outlives them.
 */
@Entity('data_room_actions')
@SqlIndex('data_room_actions_page', '(workspace_id, us DESC, key DESC)')
@Check('data_room_actions_kind_check', `kind IN ('metric','reading','proposal','settlement','void')`)
export class DataRoomAction {
  @PrimaryColumn({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'data_room_actions_workspace_id_fkey' })
  workspace?: Workspace;
  @PrimaryColumn({ type: 'text' }) key!: string;
  @Column({ type: 'text' }) kind!: 'metric' | 'reading' | 'proposal' | 'settlement' | 'void';
  @Column({ type: 'timestamptz' }) at!: Date;
  @Column({ type: 'bigint' }) us!: string;
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId!: string | null;
  @Column({ type: 'uuid', name: 'metric_id', nullable: true }) metricId!: string | null;
  @Column({ type: 'text', name: 'metric_name', nullable: true }) metricName!: string | null;
  @Column({ type: 'text', nullable: true }) field!: 'name' | 'description' | null;
  @Column({ type: 'text', name: 'from_text', nullable: true }) fromText!: string | null;
  @Column({ type: 'text', name: 'to_text', nullable: true }) toText!: string | null;
  @Column({ type: 'double precision', name: 'old_value', nullable: true }) oldValue!: number | null;
  @Column({ type: 'double precision', nullable: true }) value!: number | null;
  @Column({ type: 'boolean', default: false }) na!: boolean;
  @Column({ type: 'timestamptz', name: 'as_of', nullable: true }) asOf!: Date | null;
  @Column({ type: 'text', nullable: true }) note!: string | null;
  @Column({ type: 'uuid', name: 'proposal_id', nullable: true }) proposalId!: string | null;
  @Column({ type: 'text', nullable: true }) title!: string | null;
  @Column({ type: 'text', nullable: true }) decision!: string | null;
  @Column({ type: 'boolean', default: false }) spam!: boolean;
  @Column({ type: 'uuid', name: 'market_id', nullable: true }) marketId!: string | null;
  @Column({ type: 'text', name: 'target_date', nullable: true }) targetDate!: string | null;
  @Column({ type: 'text', nullable: true }) branch!: string | null;
  @Column({ type: 'boolean', name: 'settled_early', default: false }) settledEarly!: boolean;
  @Column({ type: 'text', nullable: true }) reason!: string | null;
}

import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Metric } from './metric';
import { Proposal } from './proposal';

/** migrations 1765000000000-TrackRecord: one decided proposal, metric and target date (issue 68). */
@Entity('track_record')
@Unique('track_record_decided_market_id_key', ['decidedMarketId'])
@Index('track_record_workspace', ['workspaceId', 'id'])
@Index('track_record_metric', ['metricId', 'settledAt'])
@Check('track_record_decision_check', `decision IN ('approved','declined')`)
@Check('track_record_advice_check', `advice IN ('approved','declined')`)
@Check('track_record_status_check', `status IN ('pending','realised','voided')`)
export class TrackRecordRow {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'uuid', name: 'proposal_id' }) proposalId!: string;
  @ManyToOne(() => Proposal, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'proposal_id', foreignKeyConstraintName: 'track_record_proposal_id_fkey' })
  proposal?: Proposal;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @ManyToOne(() => Metric, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'metric_id', foreignKeyConstraintName: 'track_record_metric_id_fkey' })
  metric?: Metric;
  @Column({ type: 'text', name: 'target_date' }) targetDate!: string;
  @Column({ type: 'uuid', name: 'decided_market_id' }) decidedMarketId!: string;
  @Column({ type: 'text' }) decision!: 'approved' | 'declined';
  @Column({ type: 'timestamptz', name: 'decided_at' }) decidedAt!: Date;
  @Column({ type: 'double precision', name: 'range_min' }) rangeMin!: number;
  @Column({ type: 'double precision', name: 'range_max' }) rangeMax!: number;
  @Column({ type: 'double precision', name: 'approved_consensus', nullable: true }) approvedConsensus!: number | null;
  @Column({ type: 'double precision', name: 'declined_consensus', nullable: true }) declinedConsensus!: number | null;
  @Column({ type: 'text', nullable: true }) advice!: 'approved' | 'declined' | null;
  @Column({ type: 'double precision', name: 'last_reading', nullable: true }) lastReading!: number | null;
  @Column({ type: 'double precision', name: 'average_change', nullable: true }) averageChange!: number | null;
  @Column({ type: 'text', default: 'pending' }) status!: 'pending' | 'realised' | 'voided';
  @Column({ type: 'double precision', name: 'realised_value', nullable: true }) realisedValue!: number | null;
  @Column({ type: 'timestamptz', name: 'settled_at', nullable: true }) settledAt!: Date | null;
  @Column({ type: 'double precision', name: 'market_error', nullable: true }) marketError!: number | null;
  @Column({ type: 'double precision', name: 'persistence_error', nullable: true }) persistenceError!: number | null;
  @Column({ type: 'double precision', name: 'average_change_error', nullable: true }) averageChangeError!: number | null;
  @Column({ type: 'boolean', name: 'direction_held', nullable: true }) directionHeld!: boolean | null;
  @Column({ type: 'boolean', name: 'average_change_direction_held', nullable: true }) averageChangeDirectionHeld!: boolean | null;
  @Column({ type: 'double precision', name: 'forecast_p', nullable: true }) forecastP!: number | null;
  @Column({ type: 'double precision', name: 'outcome_v', nullable: true }) outcomeV!: number | null;
}

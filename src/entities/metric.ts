import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';
import type { TimePreference } from '../domain/horizons';
import { SqlIndex } from './sqlIndex';
import { Workspace } from './workspace';

/** migrations 1763700001000-Metrics. */
@Entity('metrics')
@SqlIndex('metrics_name', '(workspace_id, lower(name))', { unique: true })
@Index('metrics_order', ['workspaceId', 'depth', 'sortOrder'])
@Check('metrics_market_range_max_check', 'market_range_max > 0')
@Check('metrics_resets_every_check', `resets_every IN ('hour','day','week','month','year')`)
@Check('metrics_liquidity_credits_check', 'liquidity_credits >= 0')
@Check('metrics_settlement_lag_minutes_check', 'settlement_lag_minutes BETWEEN 0 AND 129600')
export class Metric {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'metrics_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  /** The manually set base value. */
  @Column({ type: 'double precision', default: 0 }) value!: number;
  @Column({ type: 'text', default: '0' }) formula!: string;
  /** value + formula result; null when that is not a finite number (formulaError says why). */
  @Column({ type: 'double precision', nullable: true }) total!: number | null;
  @Column({ type: 'text', name: 'formula_error', nullable: true }) formulaError!: string | null;
  /** Layers of dependents: 0 for a root or a standalone leaf. */
  @Column({ type: 'int', default: 0 }) depth!: number;
  @Column({ type: 'int', name: 'sort_order' }) sortOrder!: number;
  /** The formula references no metric. */
  @Column({ type: 'boolean', name: 'is_leaf', default: true }) isLeaf!: boolean;
  @Column({ type: 'double precision', name: 'market_range_max', default: 1000 }) marketRangeMax!: number;
  @Column({ type: 'text', name: 'resets_every', nullable: true }) resetsEvery!: 'hour' | 'day' | 'week' | 'month' | 'year' | null;
  @Column({ type: 'double precision', name: 'opens_at', nullable: true }) opensAt!: number | null;
  @Column({ type: 'boolean', name: 'resolves_na_until_measured', default: false }) resolvesNaUntilMeasured!: boolean;
  @Column({ type: 'jsonb', name: 'time_preference', nullable: true }) timePreference!: TimePreference | null;
  /** Nano-units; null = the workspace default. */
  @Column({ type: 'bigint', name: 'liquidity_credits', nullable: true, transformer: bigintTransformer }) liquidityCredits!: bigint | null;
  @Column({ type: 'text', name: 'market_title', nullable: true }) marketTitle!: string | null;
  /** What the numbers count ("k€", "users"); null when unnamed (issue 59). */
  @Column({ type: 'text', nullable: true }) unit!: string | null;
  @Column({ type: 'int', name: 'settlement_lag_minutes', nullable: true }) settlementLagMinutes!: number | null;
  /** Instant of the earliest numeric reading ever logged; purges keep it (resolvesNaUntilMeasured ends for good). */
  @Column({ type: 'timestamptz', name: 'measured_at', nullable: true }) measuredAt!: Date | null;
  /** Instant (asOf) of the newest numeric reading ever logged: what "measured" means to a reader (issue 59). */
  @Column({ type: 'timestamptz', name: 'last_measured_at', nullable: true }) lastMeasuredAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

@Entity('metric_readings')
@Index('metric_readings_metric', ['metricId', 'asOf'])
@Index('metric_readings_workspace', ['workspaceId'])
export class MetricReading {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @ManyToOne(() => Metric, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'metric_id', foreignKeyConstraintName: 'metric_readings_metric_id_fkey' })
  metric?: Metric;
  /** No FK: readings go with their metric. */
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'timestamptz', default: () => 'now()' }) at!: Date;
  @Column({ type: 'timestamptz', name: 'as_of' }) asOf!: Date;
  @Column({ type: 'double precision', nullable: true }) value!: number | null;
  @Column({ type: 'boolean', default: false }) na!: boolean;
  @Column({ type: 'text' }) kind!: string;
  @Column({ type: 'text', nullable: true }) note!: string | null;
}

/** Append-only (a trigger in the migration refuses UPDATE); no FK to metrics, so the log outlives a deleted metric. */
@Entity('metric_revisions')
@Index('metric_revisions_workspace', ['workspaceId', 'id'])
@Check('metric_revisions_field_check', `field IN ('name','description')`)
export class MetricRevision {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'metric_revisions_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'text' }) field!: 'name' | 'description';
  @Column({ type: 'text', name: 'old_value', nullable: true }) oldValue!: string | null;
  @Column({ type: 'text', name: 'new_value' }) newValue!: string;
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId!: string | null;
  @Column({ type: 'timestamptz', default: () => 'now()' }) at!: Date;
}

/** The value-change history behind GET /updates (backfills write none); no FK to metrics. */
@Entity('metric_updates')
@Index('metric_updates_workspace', ['workspaceId', 'id'])
export class MetricUpdate {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'metric_updates_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'text', name: 'metric_name' }) metricName!: string;
  @Column({ type: 'double precision', name: 'old_value', nullable: true }) oldValue!: number | null;
  @Column({ type: 'double precision', name: 'new_value', nullable: true }) newValue!: number | null;
  @Column({ type: 'boolean', default: false }) na!: boolean;
  @Column({ type: 'timestamptz', name: 'as_of' }) asOf!: Date;
  @Column({ type: 'text', nullable: true }) note!: string | null;
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId!: string | null;
  @Column({ type: 'timestamptz', default: () => 'now()' }) at!: Date;
}

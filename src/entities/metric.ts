import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';

/** Schema mirror of migrations/1763700001000-Metrics; services query these tables with SQL. */
@Entity('metrics')
export class Metric {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'double precision', default: 0 }) value!: number;
  @Column({ type: 'text', default: '0' }) formula!: string;
  @Column({ type: 'double precision', nullable: true }) total!: number | null;
  @Column({ type: 'text', name: 'formula_error', nullable: true }) formulaError!: string | null;
  @Column({ type: 'int', default: 0 }) depth!: number;
  @Column({ type: 'int', name: 'sort_order' }) sortOrder!: number;
  @Column({ type: 'boolean', name: 'is_leaf', default: true }) isLeaf!: boolean;
  @Column({ type: 'double precision', name: 'market_range_max', default: 1000 }) marketRangeMax!: number;
  @Column({ type: 'text', name: 'resets_every', nullable: true }) resetsEvery!: string | null;
  @Column({ type: 'double precision', name: 'opens_at', nullable: true }) opensAt!: number | null;
  @Column({ type: 'boolean', name: 'resolves_na_until_measured', default: false }) resolvesNaUntilMeasured!: boolean;
  @Column({ type: 'jsonb', name: 'time_preference', nullable: true }) timePreference!: Record<string, unknown> | null;
  @Column({ type: 'bigint', name: 'liquidity_credits', nullable: true, transformer: bigintTransformer }) liquidityCredits!: bigint | null;
  @Column({ type: 'text', name: 'market_title', nullable: true }) marketTitle!: string | null;
  @Column({ type: 'int', name: 'settlement_lag_minutes', nullable: true }) settlementLagMinutes!: number | null;
  @Column({ type: 'timestamptz', name: 'measured_at', nullable: true }) measuredAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt!: Date;
}

@Entity('metric_readings')
export class MetricReading {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'timestamptz' }) at!: Date;
  @Column({ type: 'timestamptz', name: 'as_of' }) asOf!: Date;
  @Column({ type: 'double precision', nullable: true }) value!: number | null;
  @Column({ type: 'boolean', default: false }) na!: boolean;
  @Column({ type: 'text' }) kind!: string;
  @Column({ type: 'text', nullable: true }) note!: string | null;
}

@Entity('metric_revisions')
export class MetricRevision {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'text' }) field!: 'name' | 'description';
  @Column({ type: 'text', name: 'old_value', nullable: true }) oldValue!: string | null;
  @Column({ type: 'text', name: 'new_value' }) newValue!: string;
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId!: string | null;
  @Column({ type: 'timestamptz' }) at!: Date;
}

@Entity('metric_updates')
export class MetricUpdate {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'text', name: 'metric_name' }) metricName!: string;
  @Column({ type: 'double precision', name: 'old_value', nullable: true }) oldValue!: number | null;
  @Column({ type: 'double precision', name: 'new_value', nullable: true }) newValue!: number | null;
  @Column({ type: 'boolean', default: false }) na!: boolean;
  @Column({ type: 'timestamptz', name: 'as_of' }) asOf!: Date;
  @Column({ type: 'text', nullable: true }) note!: string | null;
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId!: string | null;
  @Column({ type: 'timestamptz' }) at!: Date;
}

import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';

/** migrations 1763802300000-Standings. Score sums in units of 1e-9 (domain/calibration), money in nano. */
const big = { type: 'bigint' as const, transformer: bigintTransformer, default: 0 };

abstract class Sums {
  @Column({ type: 'integer', default: 0 }) trades!: number;
  @Column({ ...big }) volume!: bigint;
  @Column({ ...big }) settled!: bigint;
  @Column({ type: 'integer', default: 0 }) forecasts!: number;
  @Column({ ...big, name: 'sq_err' }) sqErr!: bigint;
  @Column({ ...big, name: 'abs_err' }) absErr!: bigint;
  @Column({ type: 'bigint', array: true, name: 'bin_count' }) binCount!: string[];
  @Column({ type: 'bigint', array: true, name: 'bin_p' }) binP!: string[];
  @Column({ type: 'bigint', array: true, name: 'bin_v' }) binV!: string[];
}

/** What one resolved book added for one holder: the rows profit and P&L histories read. */
@Entity('participant_results')
@Index('participant_results_agent', ['agentId', 'resolvedAt'])
@Index('participant_results_resolved', ['resolvedAt'])
export class ParticipantResult extends Sums {
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @PrimaryColumn({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'timestamptz', name: 'resolved_at' }) resolvedAt!: Date;
}

/** Running sums per participant, workspace and metric, updated in each book's resolving transaction. */
@Entity('participant_stats')
@Index('participant_stats_workspace', ['workspaceId', 'metricId'])
export class ParticipantStats extends Sums {
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @PrimaryColumn({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @PrimaryColumn({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'integer', name: 'resolved_markets', default: 0 }) resolvedMarkets!: number;
  @Column({ type: 'timestamptz', name: 'last_resolved_at', nullable: true }) lastResolvedAt!: Date | null;
}

@Entity('seasons')
@Index('seasons_period', ['startsAt', 'endsAt'])
@Check('seasons_period_check', 'ends_at > starts_at')
export class Season {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'timestamptz', name: 'starts_at' }) startsAt!: Date;
  @Column({ type: 'timestamptz', name: 'ends_at' }) endsAt!: Date;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

/** A season's own sums: books resolved within [starts_at, ends_at), so frozen once it ends. */
@Entity('season_stats')
export class SeasonStats extends Sums {
  @PrimaryColumn({ type: 'uuid', name: 'season_id' }) seasonId!: string;
  @ManyToOne(() => Season, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'season_id', foreignKeyConstraintName: 'season_stats_season_id_fkey' })
  season?: Season;
  @PrimaryColumn({ type: 'text', name: 'agent_id' }) agentId!: string;
  @PrimaryColumn({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @PrimaryColumn({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'integer', name: 'resolved_markets', default: 0 }) resolvedMarkets!: number;
  @Column({ type: 'timestamptz', name: 'last_resolved_at', nullable: true }) lastResolvedAt!: Date | null;
}

/** Per workspace and horizon length: books resolved with a consensus, and the sum of their normalised absolute errors (1e-9). */
@Entity('benchmark_stats')
@Check('benchmark_stats_horizon_check', `horizon IN ('day','week','month','year','longer')`)
export class BenchmarkStats {
  @PrimaryColumn({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @PrimaryColumn({ type: 'text' }) horizon!: string;
  @Column({ type: 'integer', default: 0 }) books!: number;
  @Column({ ...big, name: 'abs_err' }) absErr!: bigint;
}

/** A resolved book not yet added to the standings (migration 1763901300000): its `standings` job deletes the row as it adds the book. */
@Entity('standings_pending')
export class StandingsPending {
  @PrimaryColumn({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @Column({ type: 'timestamptz', name: 'resolved_at' }) resolvedAt!: Date;
}

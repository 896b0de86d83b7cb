import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../db/transformers';

/** Schema mirror of migrations/1763700004000-Proposals; services query these tables with SQL. */
@Entity('proposals')
export class Proposal {
  @PrimaryGeneratedColumn('uuid') id!: string;
  /** Creation order (ties of created_at). */
  @Column({ type: 'bigint' }) seq!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text' }) title!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'text', name: 'proposed_by', nullable: true }) proposedBy!: string | null;
  @Column({ type: 'text', default: 'pending' }) status!: 'pending' | 'approved' | 'declined' | 'withdrawn';
  @Column({ type: 'boolean', default: false }) spam!: boolean;
  /** Per-branch liquidity the proposer funds, in nano-units. */
  @Column({ type: 'bigint', transformer: bigintTransformer }) liquidity!: bigint;
  @Column({ type: 'uuid', name: 'metric_ids', array: true, default: () => `'{}'` }) metricIds!: string[];
  @Column({ type: 'uuid', name: 'headline_metric_id', nullable: true }) headlineMetricId!: string | null;
  @Column({ type: 'text', name: 'headline_target_date', nullable: true }) headlineTargetDate!: string | null;
  @Column({ type: 'timestamptz', nullable: true }) deadline!: Date | null;
  @Column({ type: 'text', name: 'decided_by', nullable: true }) decidedBy!: string | null;
  @Column({ type: 'timestamptz', name: 'decided_at', nullable: true }) decidedAt!: Date | null;
  /** The highest trade seq on the branch books when the decision committed (no later trade exists on them). */
  @Column({ type: 'bigint', name: 'decision_trade_seq', nullable: true, transformer: bigintTransformer }) decisionTradeSeq!: bigint | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt!: Date;
}

@Entity('proposal_comments')
export class ProposalComment {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'bigint' }) seq!: string;
  @Column({ type: 'uuid', name: 'proposal_id' }) proposalId!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text', name: 'author_id', nullable: true }) authorId!: string | null;
  @Column({ type: 'uuid', name: 'parent_id', nullable: true }) parentId!: string | null;
  @Column({ type: 'text' }) body!: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

/** One row per resolved branch book: the realised value beside both branches' final consensus. */
@Entity('proposal_scorecard')
export class ProposalScorecardRow {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'proposal_id' }) proposalId!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'uuid', name: 'market_id' }) marketId!: string;
  @Column({ type: 'uuid', name: 'metric_id' }) metricId!: string;
  @Column({ type: 'text', name: 'metric_name' }) metricName!: string;
  @Column({ type: 'text', name: 'target_date' }) targetDate!: string;
  @Column({ type: 'text' }) branch!: 'approved' | 'declined';
  @Column({ type: 'text' }) decision!: 'pending' | 'approved' | 'declined' | 'withdrawn';
  @Column({ type: 'boolean', nullable: true }) taken!: boolean | null;
  @Column({ type: 'double precision', name: 'realised_value' }) realisedValue!: number;
  @Column({ type: 'double precision', name: 'range_min' }) rangeMin!: number;
  @Column({ type: 'double precision', name: 'range_max' }) rangeMax!: number;
  @Column({ type: 'double precision', name: 'approved_consensus', nullable: true }) approvedConsensus!: number | null;
  @Column({ type: 'double precision', name: 'declined_consensus', nullable: true }) declinedConsensus!: number | null;
  @Column({ type: 'double precision', nullable: true }) predicted!: number | null;
  @Column({ type: 'double precision', nullable: true }) error!: number | null;
  @Column({ type: 'boolean', name: 'within_range', nullable: true }) withinRange!: boolean | null;
  @Column({ type: 'boolean', name: 'closer_than_other', nullable: true }) closerThanOther!: boolean | null;
  @Column({ type: 'timestamptz', name: 'resolved_at' }) resolvedAt!: Date;
}

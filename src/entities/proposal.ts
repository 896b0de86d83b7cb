import { Check, Column, CreateDateColumn, Entity, Generated, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { bigintTransformer } from '../db/transformers';
import { Agent } from './agent';
import { SqlIndex } from './sqlIndex';
import { Workspace } from './workspace';

/** migrations 1763700004000-Proposals. */
@Entity('proposals')
@Unique('proposals_seq_key', ['seq'])
@SqlIndex('proposals_workspace', '(workspace_id, created_at DESC, seq DESC)')
@Index('proposals_proposer', ['proposedBy'], { where: 'proposed_by IS NOT NULL' })
@Index('proposals_decided', ['workspaceId', 'decidedAt'], { where: 'decided_at IS NOT NULL' })
@Check('proposals_title_check', 'length(title) BETWEEN 1 AND 200')
@Check('proposals_status_check', `status IN ('pending','approved','declined','withdrawn')`)
@Check('proposals_liquidity_check', 'liquidity >= 0')
export class Proposal {
  @PrimaryGeneratedColumn('uuid') id!: string;
  /** Creation order (ties of created_at); bigserial. */
  @Column({ type: 'bigint' }) @Generated('increment') seq!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'proposals_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'text' }) title!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'text', name: 'proposed_by', nullable: true }) proposedBy!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'proposed_by', foreignKeyConstraintName: 'proposals_proposed_by_fkey' })
  proposer?: Agent | null;
  @Column({ type: 'text', default: 'pending' }) status!: 'pending' | 'approved' | 'declined' | 'withdrawn';
  @Column({ type: 'boolean', default: false }) spam!: boolean;
  /** Per-branch liquidity the proposer funds, in nano-units. */
  @Column({ type: 'bigint', transformer: bigintTransformer }) liquidity!: bigint;
  @Column({ type: 'uuid', name: 'metric_ids', array: true, default: () => `'{}'` }) metricIds!: string[];
  @Column({ type: 'uuid', name: 'headline_metric_id', nullable: true }) headlineMetricId!: string | null;
  @Column({ type: 'text', name: 'headline_target_date', nullable: true }) headlineTargetDate!: string | null;
  @Column({ type: 'timestamptz', nullable: true }) deadline!: Date | null;
  @Column({ type: 'text', name: 'decided_by', nullable: true }) decidedBy!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'decided_by', foreignKeyConstraintName: 'proposals_decided_by_fkey' })
  decider?: Agent | null;
  @Column({ type: 'timestamptz', name: 'decided_at', nullable: true }) decidedAt!: Date | null;
  /** The highest trade seq on the branch books when the decision committed (no later trade exists on them). */
  @Column({ type: 'bigint', name: 'decision_trade_seq', nullable: true, transformer: bigintTransformer }) decisionTradeSeq!: bigint | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

@Entity('proposal_comments')
@Unique('proposal_comments_seq_key', ['seq'])
@Index('proposal_comments_proposal', ['proposalId', 'seq'])
@Check('proposal_comments_body_check', 'length(body) BETWEEN 1 AND 5000')
export class ProposalComment {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'bigint' }) @Generated('increment') seq!: string;
  @Column({ type: 'uuid', name: 'proposal_id' }) proposalId!: string;
  @ManyToOne(() => Proposal, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'proposal_id', foreignKeyConstraintName: 'proposal_comments_proposal_id_fkey' })
  proposal?: Proposal;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @Column({ type: 'text', name: 'author_id', nullable: true }) authorId!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'author_id', foreignKeyConstraintName: 'proposal_comments_author_id_fkey' })
  author?: Agent | null;
  @Column({ type: 'uuid', name: 'parent_id', nullable: true }) parentId!: string | null;
  @ManyToOne(() => ProposalComment, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'parent_id', foreignKeyConstraintName: 'proposal_comments_parent_id_fkey' })
  parent?: ProposalComment | null;
  @Column({ type: 'text' }) body!: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}

/** One row per resolved branch book: the realised value beside both branches' final consensus; no FK to markets or metrics so the record outlives them. */
@Entity('proposal_scorecard')
@Unique('proposal_scorecard_market_id_key', ['marketId'])
@Index('proposal_scorecard_workspace', ['workspaceId', 'id'])
@Index('proposal_scorecard_proposal', ['proposalId'])
@Check('proposal_scorecard_branch_check', `branch IN ('approved','declined')`)
@Check('proposal_scorecard_decision_check', `decision IN ('pending','approved','declined','withdrawn')`)
export class ProposalScorecardRow {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'proposal_id' }) proposalId!: string;
  @ManyToOne(() => Proposal, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'proposal_id', foreignKeyConstraintName: 'proposal_scorecard_proposal_id_fkey' })
  proposal?: Proposal;
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

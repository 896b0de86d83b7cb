import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One phase of a deletion: rows (or books) done of the total counted when the job started. */
export interface DeletionPhase {
  name: string;
  done: number;
  total: number;
  /** The longest batch of this phase so far (ms). */
  longestBatchMs?: number;
}

/** migrations 1764109600000-Deletions: a workspace or participant deletion, run in batches by the `deletions` job. */
@Entity('deletions')
@Index('deletions_active', ['kind', 'targetId'], { unique: true, where: `state <> 'done'` })
@Index('deletions_unfinished', ['updatedAt'], { where: `state <> 'done'` })
@Check('deletions_kind_check', `kind IN ('workspace','participant')`)
@Check('deletions_state_check', `state IN ('queued','running','done','failed')`)
export class Deletion {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'text' }) kind!: 'workspace' | 'participant';
  @Column({ type: 'text', name: 'target_id' }) targetId!: string;
  @Column({ type: 'text', name: 'target_name', default: '' }) targetName!: string;
  @Column({ type: 'text', name: 'requested_by', nullable: true }) requestedBy!: string | null;
  @Column({ type: 'text', default: 'queued' }) state!: 'queued' | 'running' | 'done' | 'failed';
  /** Index into phases of the phase running now (phases.length once the last is done). */
  @Column({ type: 'integer', default: 0 }) phase!: number;
  @Column({ type: 'jsonb', default: [] }) phases!: DeletionPhase[];
  @Column({ type: 'integer', default: 0 }) batches!: number;
  @Column({ type: 'integer', name: 'longest_batch_ms', default: 0 }) longestBatchMs!: number;
  @Column({ type: 'text', nullable: true }) error!: string | null;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
  @Column({ type: 'timestamptz', name: 'finished_at', nullable: true }) finishedAt!: Date | null;
}

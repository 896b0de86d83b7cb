import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { Agent } from './agent';
import { Workspace } from './workspace';

/** migrations 1764109500000-Sources: a workspace's text or repository source (spec §2.14). */
@Entity('sources')
@Index('sources_workspace', ['workspaceId', 'createdAt'])
@Check('sources_name_check', 'length(name) BETWEEN 1 AND 120')
@Check('sources_type_check', `type IN ('text','github')`)
export class Source {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'workspace_id' }) workspaceId!: string;
  @ManyToOne(() => Workspace, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'sources_workspace_id_fkey' })
  workspace?: Workspace;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text' }) type!: 'text' | 'github';
  @Column({ type: 'text', default: '' }) description!: string;
  /** type text: the markdown. */
  @Column({ type: 'text', nullable: true }) content!: string | null;
  /** type github: owner/name, the default ref, and the token encrypted (never returned). */
  @Column({ type: 'text', nullable: true }) repository!: string | null;
  @Column({ type: 'text', name: 'default_ref', nullable: true }) defaultRef!: string | null;
  @Column({ type: 'text', name: 'token_enc', nullable: true }) tokenEnc!: string | null;
  @Column({ type: 'text', name: 'created_by', nullable: true }) createdBy!: string | null;
  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by', foreignKeyConstraintName: 'sources_created_by_fkey' })
  creator?: Agent | null;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' }) updatedAt!: Date;
}

/** The repository bridge's answers by URL, with their ETag (a 304 serves the stored body). */
@Entity('source_cache')
export class SourceCacheEntry {
  @PrimaryColumn({ type: 'uuid', name: 'source_id' }) sourceId!: string;
  @ManyToOne(() => Source, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'source_id', foreignKeyConstraintName: 'source_cache_source_id_fkey' })
  source?: Source;
  @PrimaryColumn({ type: 'text' }) url!: string;
  @Column({ type: 'text' }) etag!: string;
  @Column({ type: 'jsonb' }) body!: unknown;
  @Column({ type: 'timestamptz', name: 'fetched_at', default: () => 'now()' }) fetchedAt!: Date;
}

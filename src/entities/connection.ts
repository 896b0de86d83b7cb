import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { Agent, ApiKey } from './agent';

/** migrations 1763901100000-Connections. */

/** An MCP host a person connected (spec §2.13): it acts as the person through a key of its own. */
@Entity('connections')
@Index('connections_agent', ['agentId', 'clientId'])
export class Connection {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'text', name: 'agent_id' }) agentId!: string;
  @ManyToOne(() => Agent, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'connections_agent_id_fkey' })
  agent?: Agent;
  @Column({ type: 'text', name: 'client_id' }) clientId!: string;
  @Column({ type: 'text', name: 'client_name', default: '' }) clientName!: string;
  @Column({ type: 'text', name: 'redirect_host', default: '' }) redirectHost!: string;
  @Column({ type: 'text', name: 'key_id', nullable: true }) keyId!: string | null;
  @ManyToOne(() => ApiKey, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'key_id', foreignKeyConstraintName: 'connections_key_id_fkey' })
  key?: ApiKey | null;
  /** Which ask types are confirmed with the person before the act: { <type>: boolean }. */
  @Column({ type: 'jsonb' }) ask!: Record<string, boolean>;
  @Column({ type: 'timestamptz', name: 'connected_at', default: () => 'now()' }) connectedAt!: Date;
  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true }) lastUsedAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
}

/** One tool call through a connection (spec §2.13 call log row); status 0: refused by the connector before any request. */
@Entity('connection_calls')
@Index('connection_calls_connection', ['connectionId', 'at'])
export class ConnectionCall {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'uuid', name: 'connection_id' }) connectionId!: string;
  @ManyToOne(() => Connection, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'connection_id', foreignKeyConstraintName: 'connection_calls_connection_id_fkey' })
  connection?: Connection;
  @Column({ type: 'text' }) tool!: string;
  @Column({ type: 'text' }) method!: string;
  @Column({ type: 'text' }) path!: string;
  @Column({ type: 'text', nullable: true }) workspace!: string | null;
  @Column({ type: 'text', nullable: true }) body!: string | null;
  @Column({ type: 'text' }) confirmation!: string;
  @Column({ type: 'integer' }) status!: number;
  @Column({ type: 'timestamptz', default: () => 'now()' }) at!: Date;
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent telemetry (issue 25, spec §6): heartbeats and decision traces an agent pushes, per workspace.
 * Rows older than TELEMETRY_RETENTION_DAYS are purged by the telemetry.purge job, except each agent's
 * latest heartbeat in a workspace (the silent-agents view needs it however long the agent is gone).
 */
export class Telemetry1764109300000 implements MigrationInterface {
  name = 'Telemetry1764109300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE agent_heartbeats (
      id bigserial PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      status text NOT NULL CONSTRAINT agent_heartbeats_status_check CHECK (status IN ('ok','idle','degraded','error','stopped')),
      last_cycle_at timestamptz,
      next_cycle_at timestamptz,
      last_cycle_outcome text,
      balance bigint,
      received_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX agent_heartbeats_agent ON agent_heartbeats (workspace_id, agent_id, id)`);
    await q.query(`CREATE INDEX agent_heartbeats_age ON agent_heartbeats (received_at)`);
    await q.query(`CREATE TABLE decision_traces (
      id bigserial PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      market_id uuid NOT NULL,
      outcome text NOT NULL CONSTRAINT decision_traces_outcome_check CHECK (outcome IN ('trade','skip','error')),
      reasoning text NOT NULL CONSTRAINT decision_traces_reasoning_check CHECK (length(reasoning) <= 500),
      trade_id uuid,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX decision_traces_agent ON decision_traces (workspace_id, agent_id, id)`);
    await q.query(`CREATE INDEX decision_traces_workspace ON decision_traces (workspace_id, id)`);
    await q.query(`CREATE INDEX decision_traces_age ON decision_traces (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE decision_traces`);
    await q.query(`DROP TABLE agent_heartbeats`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Connections (spec §2.13, issue 22): an MCP host a person connected, acting as that person through
 * a key of its own (key_secret: the key value, encrypted with AUTH_SECRET, so the connector can send
 * it), with per-ask-type confirmation switches; and its call log.
 */
export class Connections1763901100000 implements MigrationInterface {
  name = 'Connections1763901100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE connections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        client_id text NOT NULL,
        client_name text NOT NULL DEFAULT '',
        redirect_host text NOT NULL DEFAULT '',
        key_id text REFERENCES api_keys(id) ON DELETE SET NULL,
        key_secret text NOT NULL,
        ask jsonb NOT NULL,
        connected_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX connections_agent ON connections (agent_id, client_id)`);
    await q.query(`
      CREATE TABLE connection_calls (
        id bigserial PRIMARY KEY,
        connection_id uuid NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
        tool text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        workspace text,
        body text,
        confirmation text NOT NULL,
        status integer NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX connection_calls_connection ON connection_calls (connection_id, at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS connection_calls`);
    await q.query(`DROP TABLE IF EXISTS connections`);
  }
}

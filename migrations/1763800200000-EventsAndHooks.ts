import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event log: outbox rows get a `seq` (assigned after commit by the one sequencer, in the order
 * rows become visible, so a reader paging on it never skips a late committer) and an optional
 * recipient. Webhook endpoints (hooks), their delivery log, and the participants' notification switches.
 */
export class EventsAndHooks1763800200000 implements MigrationInterface {
  name = 'EventsAndHooks1763800200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN seq bigint, ADD COLUMN agent_id text`);
    // Rows already relayed keep their order: their seq is their id.
    await q.query(`UPDATE outbox SET seq = id WHERE published_at IS NOT NULL`);
    // Partial: a writer's INSERT (seq still null, the trade hot path among them) adds no entry to either.
    await q.query(`CREATE UNIQUE INDEX outbox_seq ON outbox (seq) WHERE seq IS NOT NULL`);
    await q.query(`CREATE INDEX outbox_workspace_seq ON outbox (workspace_id, seq) WHERE seq IS NOT NULL`);
    await q.query(`CREATE TABLE event_sequencer (id integer PRIMARY KEY, last_seq bigint NOT NULL)`);
    await q.query(`INSERT INTO event_sequencer (id, last_seq) SELECT 1, coalesce(max(seq), 0) FROM outbox`);
    await q.query(`ALTER TABLE agents ADD COLUMN notifications jsonb`);
    await q.query(`CREATE TABLE hooks (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      url text NOT NULL,
      instance text NOT NULL DEFAULT '',
      description text NOT NULL DEFAULT '',
      events jsonb NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_until timestamptz,
      cursor_seq bigint NOT NULL,
      attempt integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      failing_since timestamptz,
      lease_until timestamptz,
      lease_token text,
      disabled_at timestamptz,
      disabled_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX hooks_workspace ON hooks (workspace_id)`);
    await q.query(`CREATE INDEX hooks_agent ON hooks (agent_id)`);
    await q.query(`CREATE TABLE hook_deliveries (
      id bigserial PRIMARY KEY,
      hook_id uuid NOT NULL REFERENCES hooks(id) ON DELETE CASCADE,
      event_seq bigint NOT NULL,
      event_type text NOT NULL,
      attempt integer NOT NULL,
      status text NOT NULL,
      http_status integer,
      latency_ms integer NOT NULL,
      response text NOT NULL DEFAULT '',
      error text,
      manual boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX hook_deliveries_hook ON hook_deliveries (hook_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS hook_deliveries`);
    await q.query(`DROP TABLE IF EXISTS hooks`);
    await q.query(`ALTER TABLE agents DROP COLUMN IF EXISTS notifications`);
    await q.query(`DROP TABLE IF EXISTS event_sequencer`);
    await q.query(`DROP INDEX IF EXISTS outbox_workspace_seq`);
    await q.query(`DROP INDEX IF EXISTS outbox_seq`);
    await q.query(`ALTER TABLE outbox DROP COLUMN IF EXISTS seq, DROP COLUMN IF EXISTS agent_id`);
  }
}

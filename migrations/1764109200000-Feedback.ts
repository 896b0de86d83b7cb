import type { MigrationInterface, QueryRunner } from 'typeorm';

/** POST /feedback (issue 25): what a participant reports, kept with who sent it; read by the platform operator. */
export class Feedback1764109200000 implements MigrationInterface {
  name = 'Feedback1764109200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE feedback (
      id bigserial PRIMARY KEY,
      agent_id text REFERENCES agents(id) ON DELETE SET NULL,
      workspace_id uuid REFERENCES workspaces(id) ON DELETE SET NULL,
      message text NOT NULL CONSTRAINT feedback_message_check CHECK (length(message) BETWEEN 1 AND 5000),
      context jsonb,
      request_id text,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX feedback_agent ON feedback (agent_id) WHERE agent_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE feedback`);
  }
}

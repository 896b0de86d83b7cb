import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Access control (spec §2.10, §2.11, §3.4, §4.2, §5): view links, onboarding claims, the waitlist. */
export class Access1763700002000 implements MigrationInterface {
  name = 'Access1763700002000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE view_links (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      token text NOT NULL UNIQUE,
      created_by text REFERENCES agents(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz)`);
    await q.query(`CREATE UNIQUE INDEX view_links_one_active ON view_links (workspace_id) WHERE revoked_at IS NULL`);
    await q.query(`CREATE TABLE claim_tokens (
      token_hash text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      used_at timestamptz,
      used_by text REFERENCES agents(id) ON DELETE SET NULL)`);
    await q.query(`CREATE INDEX claim_tokens_agent ON claim_tokens (agent_id)`);
    await q.query(`CREATE TABLE waitlist (
      id bigserial PRIMARY KEY,
      email text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX waitlist_email_ci ON waitlist (lower(email))`);
    await q.query(`ALTER TABLE agents ADD COLUMN claimed_by text REFERENCES agents(id) ON DELETE SET NULL, ADD COLUMN claimed_at timestamptz`);
    await q.query(`CREATE INDEX agents_parent ON agents (parent_id) WHERE parent_id IS NOT NULL`);
    await q.query(`CREATE INDEX agents_created_by ON agents (created_by) WHERE created_by IS NOT NULL`);
    await q.query(`CREATE INDEX groups_workspace ON groups (workspace_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS groups_workspace`);
    await q.query(`DROP INDEX IF EXISTS agents_created_by`);
    await q.query(`DROP INDEX IF EXISTS agents_parent`);
    await q.query(`ALTER TABLE agents DROP COLUMN IF EXISTS claimed_at, DROP COLUMN IF EXISTS claimed_by`);
    for (const t of ['waitlist', 'claim_tokens', 'view_links']) await q.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pgcrypto`);
    await q.query(`CREATE TABLE settings (key text PRIMARY KEY, value jsonb NOT NULL)`);
    await q.query(`CREATE TABLE agents (
      id text PRIMARY KEY,
      nickname text NOT NULL,
      operator text,
      bio text NOT NULL DEFAULT '',
      intent text NOT NULL DEFAULT '',
      source text,
      parent_id text REFERENCES agents(id) ON DELETE SET NULL,
      created_by text REFERENCES agents(id) ON DELETE SET NULL,
      is_platform boolean NOT NULL DEFAULT false,
      unclaimed boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX agents_nickname_ci ON agents (lower(nickname))`);
    await q.query(`CREATE TABLE workspaces (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      slug text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      public boolean NOT NULL DEFAULT false,
      owner_id text NOT NULL REFERENCES agents(id),
      external_proposals boolean NOT NULL DEFAULT true,
      default_liquidity bigint NOT NULL,
      default_proposal_liquidity bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX workspaces_slug ON workspaces (lower(slug))`);
    await q.query(`CREATE TABLE api_keys (
      id text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      hash text NOT NULL UNIQUE,
      hash_prefix text NOT NULL,
      label text NOT NULL DEFAULT '',
      scopes text[] NOT NULL,
      workspace_id uuid REFERENCES workspaces(id) ON DELETE SET NULL,
      workspace_locked boolean NOT NULL DEFAULT false,
      is_master boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz)`);
    await q.query(`CREATE INDEX api_keys_agent ON api_keys (agent_id)`);
    await q.query(`CREATE TABLE groups (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      system boolean NOT NULL DEFAULT false,
      capabilities text[] NOT NULL,
      metric_permissions jsonb NOT NULL DEFAULT '{}',
      source_permissions jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX groups_name ON groups (workspace_id, lower(name))`);
    await q.query(`CREATE TABLE group_members (
      group_id uuid NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      PRIMARY KEY (group_id, agent_id))`);
    await q.query(`CREATE INDEX group_members_agent ON group_members (agent_id)`);
    await q.query(`CREATE TABLE memberships (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      joined_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, agent_id))`);
    await q.query(`CREATE INDEX memberships_agent ON memberships (agent_id)`);
    await q.query(`CREATE TABLE accounts (
      id text PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('participant','pool','issuance','treasury')),
      balance bigint NOT NULL DEFAULT 0,
      CONSTRAINT accounts_no_overdraft CHECK (kind NOT IN ('participant','pool') OR balance >= 0))`);
    await q.query(`CREATE TABLE ledger_entries (
      id bigserial PRIMARY KEY,
      transfer_id uuid NOT NULL,
      account_id text NOT NULL REFERENCES accounts(id),
      amount bigint NOT NULL,
      kind text NOT NULL,
      ref text,
      memo text,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX ledger_entries_account ON ledger_entries (account_id, id)`);
    await q.query(`CREATE INDEX ledger_entries_transfer ON ledger_entries (transfer_id)`);
    await q.query(`CREATE TABLE outbox (
      id bigserial PRIMARY KEY,
      workspace_id uuid,
      type text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz)`);
    await q.query(`CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL`);
    await q.query(`CREATE INDEX outbox_workspace ON outbox (workspace_id, id)`);
    await q.query(`INSERT INTO accounts (id, kind) VALUES ('issuance', 'issuance'), ('treasury', 'treasury')`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['outbox', 'ledger_entries', 'accounts', 'memberships', 'group_members', 'groups', 'api_keys', 'workspaces', 'agents', 'settings']) {
      await q.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
    }
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sources (issue 25, spec §2.14): workspace-scoped information stores. type text holds markdown
 * (at most 1 MB); type github bridges a repository read-only, with an optional token stored
 * encrypted (AES-256-GCM, SOURCE_TOKEN_KEY). source_cache keeps the bridge's answers by ETag.
 */
export class Sources1764109500000 implements MigrationInterface {
  name = 'Sources1764109500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE sources (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL CONSTRAINT sources_name_check CHECK (length(name) BETWEEN 1 AND 120),
      type text NOT NULL CONSTRAINT sources_type_check CHECK (type IN ('text','github')),
      description text NOT NULL DEFAULT '',
      content text,
      repository text,
      default_ref text,
      token_enc text,
      created_by text REFERENCES agents(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX sources_workspace ON sources (workspace_id, created_at)`);
    await q.query(`CREATE TABLE source_cache (
      source_id uuid NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
      url text NOT NULL,
      etag text NOT NULL,
      body jsonb NOT NULL,
      fetched_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (source_id, url))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE source_cache`);
    await q.query(`DROP TABLE sources`);
  }
}

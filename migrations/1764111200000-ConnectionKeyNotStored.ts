import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 58: the MCP connector acts in process with its connection's principal (the key row's
 * participant and scopes, found by key_id), so a connection no longer stores its key's value
 * (key_secret, reversible under AUTH_SECRET). The key row keeps only its hash, as every key does.
 */
export class ConnectionKeyNotStored1764111200000 implements MigrationInterface {
  name = 'ConnectionKeyNotStored1764111200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE connections DROP COLUMN IF EXISTS key_secret`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The values are gone: a connection opened before is refused at /mcp until connected again.
    await q.query(`ALTER TABLE connections ADD COLUMN IF NOT EXISTS key_secret text NOT NULL DEFAULT ''`);
  }
}

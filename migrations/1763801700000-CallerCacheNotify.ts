import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every committed change to what resolving a caller reads (keys, workspaces, groups, group members,
 * memberships) notifies `auth_changed`; each process's caller cache drops everything on it (issue
 * 17). A trigger, so no write path (raw SQL included) can forget. A key's last_used_at bump is left
 * out: no access decision reads it.
 */
const TABLES: Array<[string, string]> = [
  ['api_keys', 'INSERT OR DELETE OR TRUNCATE OR UPDATE OF id, agent_id, hash, hash_prefix, label, scopes, workspace_id, workspace_locked, is_master, created_at, revoked_at'],
  ['workspaces', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['groups', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['group_members', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['memberships', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
];

export class CallerCacheNotify1763801700000 implements MigrationInterface {
  name = 'CallerCacheNotify1763801700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION notify_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('auth_changed', TG_TABLE_NAME); RETURN NULL; END $$`);
    for (const [table, events] of TABLES) {
      await q.query(`CREATE TRIGGER ${table}_auth_changed AFTER ${events} ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table] of TABLES) await q.query(`DROP TRIGGER IF EXISTS ${table}_auth_changed ON ${table}`);
    await q.query(`DROP FUNCTION IF EXISTS notify_auth_changed()`);
  }
}

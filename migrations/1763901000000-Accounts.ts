import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts (issue 22): the tables of the account system (Better Auth 1.7.5, email and password),
 * created here rather than by the library at start-up so that boot and tests stay deterministic.
 * The DDL is what that version's `getMigrations` compiles for our options (model names auth_*);
 * test/integration/schema.test.ts asks the library whether anything is missing. The
 * library owns these tables (it reads and writes them through its own adapter), so they have no
 * TypeORM entity: the drift test lists them as library-owned (see AUTH_LIBRARY_TABLES).
 *
 * agents.account_id links a participant to its account: one participant per account. No foreign
 * key: the account row belongs to the library, and deleting an account unlinks its participant in
 * our own transaction (services/accounts deleteAccount).
 */
export class Accounts1763901000000 implements MigrationInterface {
  name = 'Accounts1763901000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "auth_users" ("id" text NOT NULL PRIMARY KEY, "name" text NOT NULL, "email" text NOT NULL UNIQUE, "emailVerified" boolean NOT NULL, "image" text, "createdAt" timestamptz DEFAULT CURRENT_TIMESTAMP NOT NULL, "updatedAt" timestamptz DEFAULT CURRENT_TIMESTAMP NOT NULL)`,
    );
    await q.query(
      `CREATE TABLE "auth_sessions" ("id" text NOT NULL PRIMARY KEY, "expiresAt" timestamptz NOT NULL, "token" text NOT NULL UNIQUE, "createdAt" timestamptz DEFAULT CURRENT_TIMESTAMP NOT NULL, "updatedAt" timestamptz NOT NULL, "ipAddress" text, "userAgent" text, "userId" text NOT NULL REFERENCES "auth_users" ("id") ON DELETE CASCADE)`,
    );
    await q.query(
      `CREATE TABLE "auth_accounts" ("id" text NOT NULL PRIMARY KEY, "accountId" text NOT NULL, "providerId" text NOT NULL, "userId" text NOT NULL REFERENCES "auth_users" ("id") ON DELETE CASCADE, "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" timestamptz, "refreshTokenExpiresAt" timestamptz, "scope" text, "password" text, "createdAt" timestamptz DEFAULT CURRENT_TIMESTAMP NOT NULL, "updatedAt" timestamptz NOT NULL)`,
    );
    await q.query(
      `CREATE TABLE "auth_verifications" ("id" text NOT NULL PRIMARY KEY, "identifier" text NOT NULL, "value" text NOT NULL, "expiresAt" timestamptz NOT NULL, "createdAt" timestamptz DEFAULT CURRENT_TIMESTAMP NOT NULL, "updatedAt" timestamptz DEFAULT CURRENT_TIMESTAMP NOT NULL)`,
    );
    await q.query(`CREATE INDEX "auth_sessions_userId_idx" ON "auth_sessions" ("userId")`);
    await q.query(`CREATE INDEX "auth_accounts_userId_idx" ON "auth_accounts" ("userId")`);
    await q.query(`CREATE INDEX "auth_verifications_identifier_idx" ON "auth_verifications" ("identifier")`);
    await q.query(`ALTER TABLE agents ADD COLUMN account_id text`);
    await q.query(`ALTER TABLE agents ADD CONSTRAINT agents_account_id_key UNIQUE (account_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN IF EXISTS account_id`);
    for (const t of ['auth_verifications', 'auth_accounts', 'auth_sessions', 'auth_users']) await q.query(`DROP TABLE IF EXISTS "${t}"`);
  }
}

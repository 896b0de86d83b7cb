/**
 * Tables the account system (Better Auth) owns: created by our migrations (pinned DDL of the
 * library version), read and written only by the library. They have no TypeORM entity, and the
 * schema drift test leaves them to test/integration/accounts-schema.test.ts, which asks the library
 * itself whether our migrations give it everything it needs.
 */
export const AUTH_LIBRARY_TABLES: readonly string[] = ['auth_users', 'auth_sessions', 'auth_accounts', 'auth_verifications'];

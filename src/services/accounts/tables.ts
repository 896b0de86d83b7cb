/**
 * Tables the account system (Better Auth) owns: created by our migrations (pinned DDL of the
 * library version), read and written by the library (our own SQL only deletes: an account, or a
 * removed connection's grants in revokeClientGrants). They have no TypeORM entity, and the
 * schema drift test leaves them out by name and instead asks the library (its getMigrations)
 * whether our migrations give it every table and column it needs (test/integration/schema.test.ts).
 */
export const AUTH_LIBRARY_TABLES: readonly string[] = [
  'auth_users',
  'auth_sessions',
  'auth_accounts',
  'auth_verifications',
  'auth_jwks',
  'auth_oauth_clients',
  'auth_oauth_resources',
  'auth_oauth_client_resources',
  'auth_oauth_refresh_tokens',
  'auth_oauth_access_tokens',
  'auth_oauth_consents',
  'auth_oauth_client_assertions',
];

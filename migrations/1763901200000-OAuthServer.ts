import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OAuth 2.1 authorization server of the MCP connector (issue 22): the tables of Better Auth 1.7.5's
 * jwt plugin (signing keys) and @better-auth/oauth-provider 1.7.5 (clients, resources, tokens,
 * consents), as that version's getMigrations compiles them for our options (model names auth_*).
 * Library-owned like those of 1763901000000-Accounts: no entities (see AUTH_LIBRARY_TABLES).
 */
export class OAuthServer1763901200000 implements MigrationInterface {
  name = 'OAuthServer1763901200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create table "auth_jwks" ("id" text not null primary key, "publicKey" text not null, "privateKey" text not null, "createdAt" timestamptz not null, "expiresAt" timestamptz, "alg" text, "crv" text)`);
    await q.query(`create table "auth_oauth_clients" ("id" text not null primary key, "clientId" text not null unique, "clientSecret" text, "clientDiscoveryId" text, "disabled" boolean, "skipConsent" boolean, "enableEndSession" boolean, "subjectType" text, "scopes" jsonb, "clientCredentialsScopes" jsonb, "userId" text references "auth_users" ("id") on delete cascade, "createdAt" timestamptz, "updatedAt" timestamptz, "name" text, "uri" text, "icon" text, "contacts" jsonb, "tos" text, "policy" text, "softwareId" text, "softwareVersion" text, "softwareStatement" text, "redirectUris" jsonb not null, "postLogoutRedirectUris" jsonb, "backchannelLogoutUri" text, "backchannelLogoutSessionRequired" boolean, "tokenEndpointAuthMethod" text, "applicationType" text, "jwks" text, "jwksUri" text, "grantTypes" jsonb, "responseTypes" jsonb, "requirePKCE" boolean, "dpopBoundAccessTokens" boolean, "referenceId" text, "metadata" jsonb)`);
    await q.query(`create table "auth_oauth_resources" ("id" text not null primary key, "identifier" text not null unique, "name" text not null, "accessTokenTtl" integer, "refreshTokenTtl" integer, "signingAlgorithm" text, "signingKeyId" text, "allowedScopes" jsonb, "customClaims" jsonb, "dpopBoundAccessTokensRequired" boolean, "disabled" boolean, "createdAt" timestamptz, "updatedAt" timestamptz, "policyVersion" integer, "metadata" jsonb)`);
    await q.query(`create table "auth_oauth_client_resources" ("id" text not null primary key, "clientId" text not null references "auth_oauth_clients" ("clientId") on delete cascade, "resourceId" text not null references "auth_oauth_resources" ("identifier") on delete cascade, "metadata" jsonb, "createdAt" timestamptz)`);
    await q.query(`create table "auth_oauth_refresh_tokens" ("id" text not null primary key, "token" text not null unique, "clientId" text not null references "auth_oauth_clients" ("clientId") on delete cascade, "sessionId" text references "auth_sessions" ("id") on delete set null, "userId" text not null references "auth_users" ("id") on delete cascade, "referenceId" text, "authorizationCodeId" text, "resources" jsonb, "requestedUserInfoClaims" jsonb, "expiresAt" timestamptz not null, "createdAt" timestamptz not null, "revoked" timestamptz, "rotatedAt" timestamptz, "rotationReplayResponse" text, "rotationReplayExpiresAt" timestamptz, "authTime" timestamptz, "confirmation" jsonb, "scopes" jsonb not null)`);
    await q.query(`create table "auth_oauth_access_tokens" ("id" text not null primary key, "token" text not null unique, "clientId" text not null references "auth_oauth_clients" ("clientId") on delete cascade, "sessionId" text references "auth_sessions" ("id") on delete set null, "userId" text references "auth_users" ("id") on delete cascade, "referenceId" text, "authorizationCodeId" text, "resources" jsonb, "requestedUserInfoClaims" jsonb, "refreshId" text references "auth_oauth_refresh_tokens" ("id") on delete cascade, "expiresAt" timestamptz not null, "createdAt" timestamptz not null, "revoked" timestamptz, "confirmation" jsonb, "scopes" jsonb not null)`);
    await q.query(`create table "auth_oauth_consents" ("id" text not null primary key, "clientId" text not null references "auth_oauth_clients" ("clientId") on delete cascade, "userId" text references "auth_users" ("id") on delete cascade, "referenceId" text, "resources" jsonb, "requestedUserInfoClaims" jsonb, "scopes" jsonb not null, "createdAt" timestamptz not null, "updatedAt" timestamptz not null)`);
    await q.query(`create table "auth_oauth_client_assertions" ("id" text not null primary key, "expiresAt" timestamptz not null)`);
    await q.query(`create index "auth_oauth_clients_userId_idx" on "auth_oauth_clients" ("userId")`);
    await q.query(`create index "auth_oauth_client_resources_clientId_idx" on "auth_oauth_client_resources" ("clientId")`);
    await q.query(`create index "auth_oauth_client_resources_resourceId_idx" on "auth_oauth_client_resources" ("resourceId")`);
    await q.query(`create index "auth_oauth_refresh_tokens_clientId_idx" on "auth_oauth_refresh_tokens" ("clientId")`);
    await q.query(`create index "auth_oauth_refresh_tokens_sessionId_idx" on "auth_oauth_refresh_tokens" ("sessionId")`);
    await q.query(`create index "auth_oauth_refresh_tokens_userId_idx" on "auth_oauth_refresh_tokens" ("userId")`);
    await q.query(`create index "auth_oauth_refresh_tokens_authorizationCodeId_idx" on "auth_oauth_refresh_tokens" ("authorizationCodeId")`);
    await q.query(`create index "auth_oauth_access_tokens_clientId_idx" on "auth_oauth_access_tokens" ("clientId")`);
    await q.query(`create index "auth_oauth_access_tokens_sessionId_idx" on "auth_oauth_access_tokens" ("sessionId")`);
    await q.query(`create index "auth_oauth_access_tokens_userId_idx" on "auth_oauth_access_tokens" ("userId")`);
    await q.query(`create index "auth_oauth_access_tokens_authorizationCodeId_idx" on "auth_oauth_access_tokens" ("authorizationCodeId")`);
    await q.query(`create index "auth_oauth_access_tokens_refreshId_idx" on "auth_oauth_access_tokens" ("refreshId")`);
    await q.query(`create index "auth_oauth_consents_clientId_idx" on "auth_oauth_consents" ("clientId")`);
    await q.query(`create index "auth_oauth_consents_userId_idx" on "auth_oauth_consents" ("userId")`);
    await q.query(`create unique index "auth_oauth_client_resources_clientId_resourceId_uidx" on "auth_oauth_client_resources" ("clientId", "resourceId")`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['auth_oauth_client_assertions', 'auth_oauth_consents', 'auth_oauth_access_tokens', 'auth_oauth_refresh_tokens', 'auth_oauth_client_resources', 'auth_oauth_resources', 'auth_oauth_clients', 'auth_jwks']) await q.query(`DROP TABLE IF EXISTS "${t}"`);
  }
}

import { verifyJwsAccessToken } from 'better-auth/oauth2';
import type { Deps } from '../../deps';
import { GRANT_SCOPES } from '../../domain/connections';
import { accountSystem, mcpResource, oauthIssuer } from './auth';

/** RFC 8414 authorization server metadata (served at /.well-known/oauth-authorization-server/api/auth). */
export async function authServerMetadata(deps: Deps): Promise<Record<string, unknown>> {
  return (await accountSystem(deps).auth.api.getOAuthServerConfig()) as unknown as Record<string, unknown>;
}

/** RFC 9728 protected resource metadata of /mcp. */
export function protectedResourceMetadata(deps: Deps): Record<string, unknown> {
  return {
    resource: mcpResource(deps.config),
    authorization_servers: [oauthIssuer(deps.config)],
    bearer_methods_supported: ['header'],
    // A host asks for these (the MCP SDK asks for every one listed); the person narrows them at consent.
    scopes_supported: [...GRANT_SCOPES, 'offline_access'],
    resource_name: `${deps.config.INSTANCE_NAME} MCP connector`,
    resource_documentation: `${deps.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/api/guides/connect`,
  };
}

/** A registered client's display name and redirect host, for the consent page and the connection row. */
export async function oauthClientSummary(deps: Deps, clientId: string): Promise<{ clientId: string; name: string; redirectHost: string } | null> {
  const rows: Array<{ name: string | null; redirectUris: string[] | null }> = await deps.ds.query(`SELECT name, "redirectUris" FROM auth_oauth_clients WHERE "clientId" = $1`, [clientId]);
  if (!rows.length) return null;
  let redirectHost = '';
  try {
    redirectHost = new URL(rows[0].redirectUris?.[0] ?? '').host;
  } catch {
    redirectHost = '';
  }
  return { clientId, name: rows[0].name || clientId, redirectHost };
}

export interface McpTokenClaims {
  userId: string;
  clientId: string;
  issuedAt: Date;
  /** The OAuth scopes granted (space-separated in the token's scope claim). */
  scopes: string[];
}

/**
 * An access token the connector accepts: signed by this server's keys, issued by it, for the /mcp
 * resource (audience-checked), unexpired. null otherwise.
 */
export async function verifyMcpToken(deps: Deps, token: string): Promise<McpTokenClaims | null> {
  const system = accountSystem(deps);
  try {
    const payload = await verifyJwsAccessToken(token, {
      jwksFetch: async () => (await system.auth.api.getJwks()) as never,
      jwksCacheKey: system,
      verifyOptions: { audience: mcpResource(deps.config), issuer: oauthIssuer(deps.config) },
    });
    const clientId = (payload.azp ?? payload.client_id) as string | undefined;
    if (!payload.sub || !clientId) return null;
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
    return { userId: payload.sub, clientId, issuedAt: new Date((payload.iat ?? 0) * 1000), scopes };
  } catch {
    return null;
  }
}

/** Whether a bearer token looks like one of our JWT access tokens at all (for the main API's refusal). */
export function looksLikeAccessToken(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

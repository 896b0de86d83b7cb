import type { IncomingHttpHeaders } from 'node:http';
import { fromNodeHeaders } from 'better-auth/node';
import { verifyJwsAccessToken } from 'better-auth/oauth2';
import type { Deps } from '../../deps';
import { GRANT_SCOPES } from '../../domain/connections';
import { accountSystem, AUTH_BASE_PATH, mcpResource, oauthIssuer } from './auth';

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

/** What a page handler forwards: cookies to set and where the browser goes next. */
export interface FlowStep {
  setCookies: string[];
  redirect: string | null;
  error: string | null;
}

async function stepOf(res: Response): Promise<FlowStep> {
  const setCookies = res.headers.getSetCookie();
  const location = res.headers.get('location');
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    body = {};
  }
  const redirect = (typeof body.url === 'string' && body.url) || (typeof body.redirect_uri === 'string' && body.redirect_uri) || location || null;
  const error = res.status >= 400 ? String(body.message ?? body.error_description ?? body.error ?? `refused (${res.status})`) : null;
  return { setCookies, redirect, error };
}

/**
 * A JSON request to the account system's own handler on behalf of a page's form (its endpoints need
 * the whole request, not only a body): the browser's cookies, this server as the origin.
 */
function callAuth(deps: Deps, h: IncomingHttpHeaders, path: string, body: unknown): Promise<Response> {
  const headers = fromNodeHeaders(h);
  headers.set('accept', 'application/json');
  headers.set('content-type', 'application/json');
  headers.delete('content-length');
  headers.delete('transfer-encoding');
  const base = deps.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  headers.set('origin', new URL(base).origin);
  return accountSystem(deps).auth.handler(new Request(`${base}${AUTH_BASE_PATH}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }));
}

/** The sign-in page's form: email and password, continuing the authorization request it was sent with. */
export async function signInForAuthorization(deps: Deps, h: IncomingHttpHeaders, input: { email: string; password: string; oauthQuery: string }): Promise<FlowStep> {
  return stepOf(await callAuth(deps, h, '/sign-in/email', { email: input.email, password: input.password, oauth_query: input.oauthQuery }));
}

/** The consent page's answer (the session must be the person's own); `scope`, when given, narrows what was asked. */
export async function answerConsent(deps: Deps, h: IncomingHttpHeaders, input: { accept: boolean; oauthQuery: string; scope?: string }): Promise<FlowStep> {
  return stepOf(await callAuth(deps, h, '/oauth2/consent', { accept: input.accept, oauth_query: input.oauthQuery, ...(input.scope !== undefined ? { scope: input.scope } : {}) }));
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

import type { IncomingHttpHeaders } from 'node:http';
import { oauthProvider } from '@better-auth/oauth-provider';
import { betterAuth, type BetterAuthOptions } from 'better-auth';
import { fromNodeHeaders, toNodeHandler } from 'better-auth/node';
import { jwt } from 'better-auth/plugins';
import { Pool } from 'pg';
import type { Config } from '../../config';
import type { Deps } from '../../deps';
import { ACCOUNT_POOL_MAX } from '../../db/connections';
import { ListeningClient } from '../../db/listeningClient';
import { logger } from '../../logger';
import { sendAccountMail } from './mailer';
import { ensureAccountParticipant } from './participant';

/** Where the account system answers (spec §5.1: sign-in at POST /api/auth/sign-in/email). */
export const AUTH_BASE_PATH = '/api/auth';
/** The connector's path and, with the public base URL, its RFC 8707 resource identifier. */
export const MCP_PATH = '/mcp';
/** The server-rendered pages of the OAuth flow (sign-in and consent). */
export const OAUTH_LOGIN_PAGE = '/oauth/sign-in';
export const OAUTH_CONSENT_PAGE = '/oauth/consent';

const base = (config: Config) => config.PUBLIC_BASE_URL.replace(/\/+$/, '');
/** The resource identifier of /mcp: the audience of every access token the connector accepts. */
export const mcpResource = (config: Config) => `${base(config)}${MCP_PATH}`;
/** The issuer of access tokens (Better Auth: base URL + base path). */
export const oauthIssuer = (config: Config) => `${base(config)}${AUTH_BASE_PATH}`;

/** Cookie names start with it: mpps.session_token (__Secure-mpps.session_token when Secure). */
export const COOKIE_PREFIX = 'mpps';

/**
 * The account system's options for this configuration (shared with the schema check, which asks
 * the library whether our migration gives it every table and column it needs).
 */
export function authOptions(config: Config, pool: Pool, hooks: { userCreated?: (user: { id: string; name: string; email: string }) => Promise<void> } = {}) {
  return {
    appName: config.INSTANCE_NAME,
    baseURL: config.PUBLIC_BASE_URL,
    basePath: AUTH_BASE_PATH,
    secret: config.authSecret,
    database: pool,
    user: { modelName: 'auth_users' },
    session: { modelName: 'auth_sessions' },
    account: { modelName: 'auth_accounts' },
    verification: { modelName: 'auth_verifications' },
    emailAndPassword: {
      enabled: true,
      minPasswordLength: 8,
      revokeSessionsOnPasswordReset: true,
      sendResetPassword: async ({ user, url, token }) => {
        await sendAccountMail({
          to: user.email,
          subject: `Reset your ${config.INSTANCE_NAME} password`,
          text: `Someone asked to reset the password of ${user.email}. Open ${url} within an hour to choose a new one; ignore this message otherwise.`,
          data: { kind: 'password-reset', url, token },
        });
      },
    },
    advanced: {
      cookiePrefix: COOKIE_PREFIX,
      // Secure outside development and tests (plain http on localhost there); HttpOnly and SameSite=Lax always.
      useSecureCookies: !config.development,
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', secure: !config.development },
    },
    // The API's own limiter (services/access rateLimit) covers every route; the library's in-memory one
    // would count per process.
    rateLimit: { enabled: false },
    plugins: [
      // Signs the access tokens (JWT, audience = the resource) and serves /api/auth/jwks.
      jwt({ schema: { jwks: { modelName: 'auth_jwks' } } }),
      // OAuth 2.1 authorization server for the MCP connector: authorization code with PKCE (S256),
      // RFC 8707 resource, refresh-token rotation, dynamic client registration (public clients).
      oauthProvider({
        loginPage: OAUTH_LOGIN_PAGE,
        consentPage: OAUTH_CONSENT_PAGE,
        resources: [mcpResource(config)],
        // A dynamically registered client is linked to the connector's resource, and to nothing else.
        clientRegistrationDefaultResources: [mcpResource(config)],
        clientRegistrationAllowedResources: [mcpResource(config)],
        grantTypes: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access'],
        allowDynamicClientRegistration: true,
        allowUnauthenticatedClientRegistration: true,
        clientRegistrationRequirePKCE: true,
        accessTokenExpiresIn: 3600,
        schema: {
          oauthClient: { modelName: 'auth_oauth_clients' },
          oauthResource: { modelName: 'auth_oauth_resources' },
          oauthClientResource: { modelName: 'auth_oauth_client_resources' },
          oauthRefreshToken: { modelName: 'auth_oauth_refresh_tokens' },
          oauthAccessToken: { modelName: 'auth_oauth_access_tokens' },
          oauthConsent: { modelName: 'auth_oauth_consents' },
          oauthClientAssertion: { modelName: 'auth_oauth_client_assertions' },
        },
      }),
    ],
    databaseHooks: hooks.userCreated ? { user: { create: { after: async (user) => hooks.userCreated!(user) } } } : undefined,
    logger: { disabled: config.LOG_LEVEL === 'silent' },
  } satisfies BetterAuthOptions;
}

function build(deps: Deps) {
  if (!deps.config.AUTH_SECRET && !deps.config.development) {
    logger.warn('AUTH_SECRET is not set: a random one signs sessions and seals connection keys, so sign-ins and MCP connections end with this process (set AUTH_SECRET, 32+ characters)');
  }
  const pool = new Pool({ connectionString: deps.config.databaseUrl, max: ACCOUNT_POOL_MAX, Client: ListeningClient });
  pool.on('error', (err) => logger.warn({ err }, 'account system pool error'));
  const auth = betterAuth(authOptions(deps.config, pool, { userCreated: (user) => ensureAccountParticipant(deps, user).then(() => undefined) }));
  return { auth, pool, handler: toNodeHandler(auth) };
}

export type AccountSystem = ReturnType<typeof build>;

const systems = new WeakMap<Deps, AccountSystem>();

/** The account system of this process (one per Deps: its own small pg pool on the same database). */
export function accountSystem(deps: Deps): AccountSystem {
  let s = systems.get(deps);
  if (!s) {
    s = build(deps);
    systems.set(deps, s);
  }
  return s;
}

export async function closeAccountSystem(deps: Deps): Promise<void> {
  const s = systems.get(deps);
  if (!s) return;
  systems.delete(deps);
  await s.pool.end();
}

/** The session cookie's name (the __Secure- prefix comes with the Secure attribute). */
export function sessionCookieName(config: Config): string {
  return `${config.development ? '' : '__Secure-'}${COOKIE_PREFIX}.session_token`;
}

/** Whether the request carries this service's session cookie at all (cheap: no database). */
export function hasSessionCookie(h: IncomingHttpHeaders): boolean {
  const cookie = h.cookie;
  return typeof cookie === 'string' && cookie.includes(`${COOKIE_PREFIX}.session_token=`);
}

/** The signed-in account behind the request's cookie; null when the cookie is unknown, expired or revoked. */
export async function sessionOf(deps: Deps, h: IncomingHttpHeaders): Promise<{ userId: string; email: string; name: string; sessionId: string } | null> {
  const found = await accountSystem(deps).auth.api.getSession({ headers: fromNodeHeaders(h), query: { disableCookieCache: true } });
  if (!found) return null;
  return { userId: found.user.id, email: found.user.email, name: found.user.name, sessionId: found.session.id };
}

import { oauthProvider } from '@better-auth/oauth-provider';
import { createHash } from 'node:crypto';
import { betterAuth, type BetterAuthOptions } from 'better-auth';
import { symmetricDecrypt } from 'better-auth/crypto';
import { APIError, createAuthMiddleware } from 'better-auth/api';
import { jwt } from 'better-auth/plugins';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import type { Deps } from '../../deps';
import { GRANT_SCOPES } from '../../domain/connections';
import { logger } from '../../logger';
import { mailerReady, sendAccountMail } from './mailer';
import { endConnectionsOfGrant } from '../connections';
import { revokeClientGrants } from './grants';
import { ensureAccountParticipant } from './participant';

/** Where the account system answers (spec §5.1: sign-in at POST /api/auth/sign-in/email). */
export const AUTH_BASE_PATH = '/api/auth';
/** The connector's path and, with the public base URL, its RFC 8707 resource identifier. */
export const MCP_PATH = '/mcp';
/** The server-rendered pages of the OAuth flow (sign-in and consent). */
export const OAUTH_LOGIN_PAGE = '/oauth/sign-in';
export const OAUTH_CONSENT_PAGE = '/oauth/consent';
/** The web's page to choose a new password (src/doors/accounts/door.ts): the reset mail's link lands there. */
export const RESET_PASSWORD_PAGE = '/reset-password';

const base = (config: Config) => config.PUBLIC_BASE_URL.replace(/\/+$/, '');
/** The resource identifier of /mcp: the audience of every access token the connector accepts. */
export const mcpResource = (config: Config) => `${base(config)}${MCP_PATH}`;
/** The issuer of access tokens (Better Auth: base URL + base path). */
export const oauthIssuer = (config: Config) => `${base(config)}${AUTH_BASE_PATH}`;

/** Bounds on a dynamically registered client's metadata (anonymous registration is open). */
export const REGISTRATION_BOUNDS = { clientName: 200, redirectUris: 10, uriLength: 2000, contacts: 10 } as const;
/** The longest account name sign-up or an update accepts. */
export const ACCOUNT_NAME_MAX = 200;

const invalidClient = (field: string, sentence: string) =>
  new APIError('BAD_REQUEST', { error: field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata', error_description: sentence });

/**
 * A registration's metadata, bounded, with RFC 8252's native default: a client that names no
 * application_type and registers an http loopback or a private-use scheme redirect is a native
 * client (the library then holds it to the exact loopback hosts and reverse-domain schemes, and
 * lets the loopback port vary at authorization); everything else stays web (https only).
 */
export function registrationMetadata(body: Record<string, unknown>): Record<string, unknown> {
  const b = REGISTRATION_BOUNDS;
  if (typeof body.client_name === 'string' && body.client_name.length > b.clientName) throw invalidClient('client_name', `client_name must be at most ${b.clientName} characters.`);
  const uris = body.redirect_uris;
  if (Array.isArray(uris) && uris.length > b.redirectUris) throw invalidClient('redirect_uris', `Register at most ${b.redirectUris} redirect URIs.`);
  for (const k of ['redirect_uris', 'post_logout_redirect_uris'] as const) {
    const list = body[k];
    if (Array.isArray(list) && list.length > b.redirectUris) throw invalidClient(k, `Register at most ${b.redirectUris} ${k}.`);
    if (Array.isArray(list) && list.some((u) => typeof u === 'string' && u.length > b.uriLength)) throw invalidClient(k, `Each of ${k} must be at most ${b.uriLength} characters.`);
  }
  for (const k of ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri', 'jwks_uri', 'software_id', 'software_version'] as const) {
    if (typeof body[k] === 'string' && (body[k] as string).length > b.uriLength) throw invalidClient(k, `${k} must be at most ${b.uriLength} characters.`);
  }
  if (Array.isArray(body.contacts) && body.contacts.length > b.contacts) throw invalidClient('contacts', `List at most ${b.contacts} contacts.`);
  if (body.application_type !== undefined || !Array.isArray(uris)) return body;
  const native = uris.some((u) => typeof u === 'string' && !/^https:/i.test(u));
  return native ? { ...body, application_type: 'native' } : body;
}

/** Reset requests whose person ticked "end my connections" (read by onPasswordReset from the same request). */
const endConnectionsAsked = new WeakSet<Request>();

/** The stored id of an authorization code (the provider's default storage: SHA-256, base64url). */
const storedCodeId = (code: string) => createHash('sha256').update(code).digest('base64url');

/** Cookie names start with it: mpps.session_token (__Secure-mpps.session_token when Secure). */
export const COOKIE_PREFIX = 'mpps';

/** The session cookie as the start-up line says it. */
export const cookieSaid = (config: Pick<Config, 'secureCookies'>) =>
  config.secureCookies ? `Secure __Secure-${COOKIE_PREFIX}.session_token (PUBLIC_BASE_URL is https)` : `plain ${COOKIE_PREFIX}.session_token, not Secure (PUBLIC_BASE_URL is http)`;

/**
 * The signing key (auth_jwks) is stored encrypted with the secret. Rows the current secret cannot
 * open were made under another one (AUTH_SECRET changed): they go, so the library mints a new key on
 * its next signature; tokens they signed stop verifying, and sign-in works instead of failing.
 */
export async function dropUnreadableSigningKeys(deps: Deps): Promise<number> {
  const pool = primaryPool(deps);
  const secret = deps.config.authSecret;
  const { rows } = await pool.query<{ id: string; privateKey: string }>(`SELECT id, "privateKey" FROM auth_jwks`);
  const unreadable: string[] = [];
  for (const r of rows) {
    const ok = await symmetricDecrypt({ key: secret, data: JSON.parse(r.privateKey) as string }).then(
      () => true,
      () => false,
    );
    if (!ok) unreadable.push(r.id);
  }
  if (unreadable.length) {
    await pool.query(`UPDATE auth_oauth_resources SET "signingKeyId" = NULL WHERE "signingKeyId" = ANY($1)`, [unreadable]);
    await pool.query(`DELETE FROM auth_jwks WHERE id = ANY($1)`, [unreadable]);
    logger.warn({ keys: unreadable.length }, 'the account secret changed: the signing keys made under the old one were removed (access tokens they signed end; people sign in again)');
  }
  return unreadable.length;
}

/**
 * The account system's options for this configuration (shared with the schema check, which asks
 * the library whether our migration gives it every table and column it needs).
 */
export interface AccountHooks {
  userCreated?: (user: { id: string; name: string; email: string }) => Promise<void>;
  /** An authorization code was redeemed a second time: what its first redemption granted ends (OAuth 2.1 §4.1.2). */
  codeReplayed?: (grants: Array<{ userId: string; clientId: string }>) => Promise<void>;
  /** A password was reset: the account's sessions are gone; its connections go too when the person asked. */
  passwordReset?: (user: { id: string }, endConnections: boolean) => Promise<void>;
}

export function authOptions(config: Config, pool: Pool, hooks: AccountHooks = {}) {
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
      // Sign-up answers the same whether or not the email has an account (no enumeration): it signs
      // nobody in; the person signs in next (POST /api/auth/sign-in/email).
      autoSignIn: false,
      revokeSessionsOnPasswordReset: true,
      // The reset form's "also disconnect my assistants" box (body endConnections: true) ends every connection.
      onPasswordReset: async ({ user }, request) => {
        await hooks.passwordReset?.(user, !!request && endConnectionsAsked.has(request));
      },
      sendResetPassword: async ({ user, url, token }) => {
        // A request that named no page to come back to (redirectTo) gets the site's own reset page
        // (issue 59), which takes the token as is; one that named one goes through the library's check to it.
        const link = new URL(url).searchParams.get('callbackURL') ? url : `${base(config)}${RESET_PASSWORD_PAGE}?token=${encodeURIComponent(token)}`;
        await sendAccountMail({
          to: user.email,
          subject: `Reset your ${config.INSTANCE_NAME} password`,
          text: `Someone asked to reset the password of ${user.email}. Open ${link} within an hour to choose a new one; ignore this message otherwise.`,
          data: { kind: 'password-reset', url: link, token },
        });
      },
    },
    advanced: {
      cookiePrefix: COOKIE_PREFIX,
      // Secure (and __Secure-) only when the public address is https: a client that keeps cookies to
      // the letter drops a Secure cookie on plain http, and the person loops between sign-in and consent.
      useSecureCookies: config.secureCookies,
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', secure: config.secureCookies },
    },
    hooks: {
      before: createAuthMiddleware(async (ctx) => {
        const body = (ctx.body ?? {}) as Record<string, unknown>;
        if (ctx.path === '/oauth2/register') return { context: { body: registrationMetadata(body) } };
        if (ctx.path === '/reset-password' && body.endConnections === true && ctx.request) endConnectionsAsked.add(ctx.request);
        // No sender: say so, instead of "check your email" for mail that never comes (the same for every address).
        if (ctx.path === '/request-password-reset' && !mailerReady()) {
          throw new APIError('SERVICE_UNAVAILABLE', { code: 'RESET_MAIL_NOT_CONFIGURED', message: 'Password reset mail is not configured on this instance (it has no SMTP_URL), so no reset link can be sent: ask its operator.' });
        }
        if ((ctx.path === '/sign-up/email' || ctx.path === '/update-user') && typeof body.name === 'string' && body.name.length > ACCOUNT_NAME_MAX) {
          throw new APIError('BAD_REQUEST', { code: 'NAME_TOO_LONG', message: `The name must be at most ${ACCOUNT_NAME_MAX} characters.` });
        }
        if (ctx.path === '/oauth2/token' && body.grant_type === 'authorization_code' && typeof body.code === 'string' && hooks.codeReplayed) {
          // A code no longer stored was redeemed already (or expired): before the provider drops the
          // tokens issued for it, find whose they were, so the connection they opened ends too.
          const id = storedCodeId(body.code);
          const live = await pool.query<{ '?column?': number }>(`SELECT 1 FROM auth_verifications WHERE identifier = $1`, [id]);
          if (!live.rowCount) {
            const issued = await pool.query<{ userId: string; clientId: string }>(`SELECT DISTINCT "userId", "clientId" FROM auth_oauth_refresh_tokens WHERE "authorizationCodeId" = $1 AND "userId" IS NOT NULL`, [id]);
            if (issued.rowCount) await hooks.codeReplayed(issued.rows);
          }
        }
        return undefined;
      }),
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
        scopes: ['openid', 'profile', 'email', 'offline_access', ...GRANT_SCOPES],
        // A host that names no scope is offered every grant; the person narrows it on the consent page.
        clientRegistrationDefaultScopes: ['offline_access', ...GRANT_SCOPES],
        clientRegistrationAllowedScopes: ['openid', 'profile', 'email', 'offline_access', ...GRANT_SCOPES],
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
  // A missing wiring fails at start-up: the secret is AUTH_SECRET or the kept one (src/boot/authSecret.ts).
  if (!deps.config.authSecret) throw new Error('The account system has no secret: AUTH_SECRET is unset and none was kept (boot/authSecret.ts keepAuthSecret was not called).');
  // One database pool (issue 58): the account system's adapter (Kysely on pg) takes the app's primary pool.
  const pool = primaryPool(deps);
  const auth = betterAuth(
    authOptions(deps.config, pool, {
      userCreated: (user) => ensureAccountParticipant(deps, user).then(() => undefined),
      codeReplayed: async (grants) => {
        for (const g of grants) await endConnectionsOfGrant(deps, g.userId, g.clientId, revokeClientGrants);
        logger.warn({ grants }, 'an authorization code was redeemed twice: the connections it opened were ended');
      },
      passwordReset: async (user, endConnections) => {
        if (endConnections) await endConnectionsOfGrant(deps, user.id, null, revokeClientGrants);
      },
    }),
  );
  // Its HTTP handler is mounted by the account edge (src/doors/accounts/authSystem.ts), which shapes its refusals.
  return { auth, pool };
}

export type AccountSystem = ReturnType<typeof build>;

const systems = new WeakMap<Deps, AccountSystem>();

/** The app's primary pg pool (TypeORM's), which Better Auth's pg adapter takes as is. */
function primaryPool(deps: Deps): Pool {
  return (deps.ds.driver as unknown as { master: Pool }).master;
}

/** The account system of this process (one per Deps, on the app's primary pool). */
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
  // The pool is the app's: it closes with the data source.
  systems.delete(deps);
}

/** A signed-in account, as the edge resolved it from a session (src/doors/accounts/session.ts). */
export interface SignedInAccount {
  userId: string;
  email: string;
  name: string;
  sessionId: string;
}

import type Koa from 'koa';
import type { Deps } from '../../deps';
import { ApiError } from '../../errors';
import { consumePoint } from '../../services/access';
import { AUTH_BASE_PATH } from '../../services/accounts';
import { limitByAddress } from '../../api/middleware/rateLimit';
import { readBounded } from '../../edge/body';

/** The account system's bodies are small (an email, a password, a client's metadata). */
export const AUTH_BODY_LIMIT = 64 * 1024;

const tooLarge = () => new ApiError('payload_too_large', `The request body is over ${AUTH_BODY_LIMIT / 1024} KB, the limit of /api/auth; nothing was read.`);

/**
 * CORS for what a browser-based MCP host calls without cookies (MCP authorization spec): the
 * metadata documents, registration, the token endpoint, /mcp. Credentials never ride on these
 * (bearer tokens and PKCE), so any origin may read the answer; /mcp checks the Origin itself.
 */
export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Mcp-Session-Id, WWW-Authenticate, Retry-After, X-Request-Id',
};

const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, Accept',
  'Access-Control-Max-Age': '600',
};

/** The paths a browser-based host reaches cross-origin. */
export function isCorsPath(path: string): boolean {
  return path === '/mcp' || path.startsWith('/.well-known/oauth-') || path === `${AUTH_BASE_PATH}/oauth2/token` || path === `${AUTH_BASE_PATH}/oauth2/register` || path === `${AUTH_BASE_PATH}/jwks`;
}

/** Answers a CORS preflight (204) on those paths; adds the CORS headers to any other request there. */
export function cors(ctx: Koa.Context): boolean {
  if (!isCorsPath(ctx.path)) return false;
  if (ctx.method === 'OPTIONS') {
    ctx.set(PREFLIGHT_HEADERS);
    ctx.status = 204;
    ctx.state.rawAnswer = true;
    return true;
  }
  ctx.set(CORS_HEADERS);
  return false;
}

/** A JSON body the account system could not read (it answers 500 to one): refused here as the API refuses it. */
function refuseUnreadableJson(raw: string): void {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new ApiError('malformed_json', 'The request body is not valid JSON.');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('validation_failed', 'The request body must be a JSON object ({ ... }); a bare string, number, array or null is no body the account system takes.');
  }
}

/** The email a sign-in names (JSON or form), lower-cased; '' when none. */
function emailOf(ctx: Koa.Context, raw: string): string {
  let email: unknown;
  if (ctx.is('application/x-www-form-urlencoded')) email = new URLSearchParams(raw).get('email');
  else {
    try {
      email = (JSON.parse(raw) as { email?: unknown }).email;
    } catch {
      email = '';
    }
  }
  return typeof email === 'string' ? email.trim().toLowerCase().slice(0, 320) : '';
}

/** The sign-in brake (per email and per address), shared by POST /api/auth/sign-in/email and the OAuth sign-in page. */
export async function brakeSignIn(deps: Deps, ctx: Koa.Context, email: string): Promise<void> {
  await limitByAddress(deps, ctx, 'signin_address');
  if (email) await consumePoint(deps, 'signin_email', email);
}

/**
 * Before the account system sees a request under /api/auth: the per-address limit on every route, the registration limit, the sign-in brake, and the
 * body limit (the body is read here, bounded, and handed on already read).
 */
export async function guardAccountRoute(deps: Deps, ctx: Koa.Context): Promise<void> {
  await limitByAddress(deps, ctx, 'auth');
  const path = ctx.path.slice(AUTH_BASE_PATH.length);
  if (ctx.method === 'POST' && path === '/oauth2/register') await limitByAddress(deps, ctx, 'client_registration');
  if (ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'OPTIONS') return;
  const raw = await readBounded(ctx, AUTH_BODY_LIMIT, tooLarge);
  if (ctx.method === 'POST' && path === '/sign-in/email') await brakeSignIn(deps, ctx, emailOf(ctx, raw));
  if (raw && !ctx.is('application/x-www-form-urlencoded')) refuseUnreadableJson(raw);
  // The node adapter of the account system takes an already-read body from req.body.
  if (raw) (ctx.req as unknown as { body?: string }).body = raw;
}

import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import type { Deps } from '../deps';
import { ApiError, DomainError, isRetryable } from '../errors';
import { isQueueLoss, isTransient, pgCode } from '../failures';
import { logger } from '../logger';
import { requestIdFor } from '../requestId';
import { callerCache } from '../services/access';
import { accountSystem, AUTH_BASE_PATH, configureMailer, OAUTH_CONSENT_PAGE, OAUTH_LOGIN_PAGE } from '../services/accounts';
import { MAX_TEXT_BYTES } from '../services/sources';
import { registeredRoutes, type RouteDef } from './registry';
import { runRoute } from './dispatch';
import { serveReference } from './reference';
import { webRoutes } from '../web';
import { mcpMiddleware } from './mcp/server';
import { cors, guardAccountRoute } from './middleware/accountGuard';
import { oauthPages } from './oauthPages';
import './routes';

const BODY_LIMIT = '1mb';
// A text source holds MAX_TEXT_BYTES of UTF-8 (checked on the parsed text, with its own sentence): its
// JSON body may be several times that once escaped (\n, \uXXXX), so /sources bodies get room for it.
const SOURCE_BODY_LIMIT = MAX_TEXT_BYTES * 6 + 65_536;

// The OAuth sign-in and consent pages: their own inline style only, nothing else loaded, never framed.
// No form-action: after sign-in the browser is sent on to the client's redirect_uri.
const OAUTH_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Headers on every answer (issue 57): no MIME sniffing of JSON or the reference; no Referer leaving
 * a page (pages carry view-link tokens in their URL); the OAuth pages get a CSP and frame protection.
 */
async function securityHeaders(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  if (ctx.path === OAUTH_LOGIN_PAGE || ctx.path === OAUTH_CONSENT_PAGE) {
    ctx.set('Content-Security-Policy', OAUTH_PAGE_CSP);
    ctx.set('X-Frame-Options', 'DENY');
  }
  await next();
}

/** One answer as the contract check sees it: the route that matched (null when none did) and the body sent. */
export interface ObservedResponse {
  method: string;
  path: string;
  route: Pick<RouteDef, 'method' | 'path'> | null;
  status: number;
  type: string;
  body: unknown;
}

export interface AppOptions {
  /** Called after every request with what was answered (the integration suite checks it against the OpenAPI document). */
  onResponse?: (r: ObservedResponse) => void;
}

/** Koa app factory (no listen): used by main and by the tests through real HTTP. */
export function createApp(deps: Deps, opts: AppOptions = {}): Koa {
  // X-Forwarded-For is believed only from the configured proxy hops (TRUST_PROXY_HOPS; none by default):
  // the client address is then the one the outermost trusted proxy saw, and a caller cannot spoof it.
  const hops = deps.config.TRUST_PROXY_HOPS;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  app.context.deps = deps;
  // Account mail (password reset): SMTP from configuration; start-up says so when reset is disabled.
  configureMailer(deps.config);

  app.use(securityHeaders);
  app.use(async (ctx, next) => {
    const requestId = requestIdFor(ctx.get('x-request-id'));
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
      // ctx.respond false: the account system (or the MCP transport) wrote the answer itself.
      if (ctx.status === 404 && ctx.body === undefined && ctx.respond !== false) {
        throw new ApiError('route_not_found', `No endpoint ${ctx.method} ${ctx.path}; GET /api/help lists them all.`);
      }
      // The router's wrong-method answer (405 with Allow; 501 for a method it knows nowhere) in the one error shape.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined && ctx.respond !== false) {
        const allow = ctx.response.get('Allow');
        const takes = allow ? `it takes ${allow}` : 'GET /api/help lists the methods of every path';
        throw new ApiError('method_not_allowed', `${ctx.method} is not served at ${ctx.path}; ${takes}.`, allow ? { allow: allow.split(/,\s*/) } : {}, ctx.status);
      }
    } catch (err) {
      const apiErr = toApiError(err);
      ctx.status = apiErr.status;
      ctx.body = apiErr.toBody();
      if (isRetryable(apiErr.code)) ctx.set('Retry-After', String(apiErr.details.retryAfter ?? 1));
      if (apiErr.code === 'service_unavailable') logger.warn({ err, requestId, path: ctx.path }, 'request hit an infrastructure blip');
      else if (apiErr.status >= 500) logger.error({ err, requestId, path: ctx.path }, 'request failed');
    } finally {
      if (ctx.respond !== false && !ctx.state.rawAnswer) opts.onResponse?.({ method: ctx.method, path: ctx.path, route: ctx.state.route ?? null, status: ctx.status, type: ctx.type, body: ctx.body });
      logger.debug({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: +(performance.now() - started).toFixed(1) }, 'request');
    }
  });

  // CORS for browser-based MCP hosts (metadata, registration, token, /mcp): preflights answered here.
  app.use(async (ctx, next) => {
    if (!cors(ctx)) await next();
  });
  // The account system (spec §5.1) answers under /api/auth/* itself, before any body is read: sign-up,
  // sign-in, sign-out, session, password reset. The /api/auth routes of our own registry (DELETE
  // /api/auth/me) go to the router.
  const ownAuthPaths = new Set(registeredRoutes().filter((r) => !r.accountSystem && `/api${r.path}`.startsWith(`${AUTH_BASE_PATH}/`)).map((r) => `/api${r.path}`));
  app.use(async (ctx, next) => {
    if (!ctx.path.startsWith(`${AUTH_BASE_PATH}/`) || ownAuthPaths.has(ctx.path)) return next();
    await guardAccountRoute(deps, ctx);
    ctx.respond = false;
    try {
      await accountSystem(deps).handler(ctx.req, ctx.res);
    } catch (err) {
      if (ctx.res.headersSent) throw err;
      ctx.respond = true;
      throw err;
    }
  });

  // The OAuth discovery documents and the sign-in and consent pages (forms, not JSON).
  app.use(oauthPages(deps));
  // The MCP connector (spec §5.1) at /mcp: its transport reads the body itself.
  app.use(mcpMiddleware(deps));

  app.use(async (ctx, next) => {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || !!ctx.get('transfer-encoding');
    if (hasBody && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && !ctx.is('application/json', '+json')) {
      throw new ApiError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json.');
    }
    await next();
  });
  const parseBody = bodyParser({ enableTypes: ['json'], jsonLimit: BODY_LIMIT, encoding: 'utf-8', parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] });
  const parseSourceBody = bodyParser({ enableTypes: ['json'], jsonLimit: SOURCE_BODY_LIMIT, encoding: 'utf-8', parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] });
  app.use((ctx, next) => (/^\/api\/sources(\/[^/]*)?$/.test(ctx.path) ? parseSourceBody : parseBody)(ctx, next));
  app.use(serveReference);
  app.use(webRoutes(deps));

  const router = new Router({ prefix: '/api' });
  for (const def of bySpecificity(registeredRoutes().filter((r) => !r.accountSystem))) {
    // A change made through this process is seen by its very next request: its own caller cache is
    // dropped before the answer goes out (other processes hear of it by NOTIFY). Trades and orders
    // change no access.
    const mayChangeAccess = def.method !== 'GET' && !def.path.startsWith('/predictions/');
    const handle = async (ctx: Koa.ParameterizedContext) => {
      ctx.state.route = def;
      const { status, result: answer, warnings } = await runRoute(deps, def, { headers: ctx.headers, params: ctx.params, query: { ...ctx.query }, body: ctx.request.body, koa: ctx });
      let result = answer;
      if (warnings.length) {
        ctx.set('Deprecation', 'true');
        ctx.set('Link', '</api/guides/compatibility>; rel="deprecation"; type="text/markdown"');
        if (result && typeof result === 'object' && !Array.isArray(result)) {
          const prior = (result as { warnings?: unknown }).warnings;
          result = { ...result, warnings: [...(Array.isArray(prior) ? prior : []), ...warnings] };
        }
      }
      ctx.status = status || (result === undefined ? 204 : 200);
      if (result !== undefined) ctx.body = result;
    };
    router.register(def.path, [def.method], async (ctx) => {
      if (mayChangeAccess) {
        try {
          await handle(ctx);
        } finally {
          callerCache(deps).invalidate();
        }
        return;
      }
      await handle(ctx);
    });
  }
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return app;
}

/**
 * Literal path segments before parameters (GET /agents/mine before GET /agents/:id), whatever order
 * the areas registered in: the router runs the first matching route.
 */
function bySpecificity<T extends { path: string }>(defs: readonly T[]): T[] {
  const rank = (p: string) => p.split('/').map((seg) => (seg.startsWith(':') ? '1' : '0')).join('');
  return [...defs].sort((a, b) => {
    const ra = rank(a.path);
    const rb = rank(b.path);
    return ra < rb ? -1 : ra > rb ? 1 : 0;
  });
}

/** Postgres refuses NUL bytes and untranslatable characters in text: the client's input, not our failure. */
const BAD_TEXT_CODES = new Set(['22021', '22P05']);

function toApiError(err: unknown): ApiError {
  if (err instanceof DomainError) return ApiError.from(err);
  if (isTransient(err) || isQueueLoss(err)) {
    return new ApiError('service_unavailable', 'A database or queue connection failed for a moment and nothing was written; retry in a second (with the same Idempotency-Key for money moves).');
  }
  if (BAD_TEXT_CODES.has(pgCode(err) ?? '')) return new ApiError('validation_failed', 'The request holds a character that cannot be stored (such as a NUL byte).');
  const e = err as { status?: number; type?: string; expose?: boolean; message?: string };
  if (e?.type === 'entity.too.large' || e?.status === 413) return new ApiError('payload_too_large', 'The request body is over 1 MB.');
  // Valid JSON that is no object or array (a string, a number, null): the body parser refuses it in strict mode.
  if (e?.status === 400 && /only supports object and array/i.test(e.message ?? '')) {
    return new ApiError('validation_failed', 'The request body must be a JSON object ({ ... }); a bare string, number or null is valid JSON but no body this API takes.');
  }
  if (e?.type === 'entity.parse.failed' || (e?.status === 400 && /json/i.test(e.message ?? ''))) {
    return new ApiError('malformed_json', 'The request body is not valid JSON.');
  }
  if (e?.type === 'encoding.unsupported' || e?.status === 415) return new ApiError('unsupported_media_type', 'Send the request body as UTF-8 JSON.');
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new ApiError('validation_failed', e.expose && e.message ? `${e.message}.` : 'The request could not be read.', {}, e.status);
  }
  return new ApiError('internal_error', 'Something failed on our side; quote the X-Request-Id header when reporting it.');
}

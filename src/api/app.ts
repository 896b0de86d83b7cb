import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';
import type { Deps } from '../deps';
import { ApiError, isRetryable } from '../errors';
import { logger } from '../logger';
import { outsideReadScope } from '../readScope';
import { requestIdFor } from '../requestId';
import { namedIn, resolveCaller } from './access';
import { MAX_TEXT_BYTES } from '../services/sources';
import { registeredRoutes, type RouteDef } from './registry';
import { callRoute, toApiError } from './dispatch';
import './routes';

const BODY_LIMIT = '1mb';

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

/**
 * The answer's edge for every front door: the request id, the one error shape (a thrown refusal
 * becomes its code and sentence), the router's 404 and wrong-method answers in that shape, and the
 * contract observer. The first middleware of the app (src/doors).
 */
export function answerEdge(opts: AppOptions = {}): Koa.Middleware {
  return async (ctx, next) => {
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
  };
}

/** JSON bodies only, up to 1 MB, read for the methods that carry one. */
// A text source holds MAX_TEXT_BYTES of UTF-8 (checked on the parsed text, with its own sentence): its
// JSON body may be several times that once escaped (\n, \uXXXX), so /sources bodies get room for it.
const SOURCE_BODY_LIMIT = MAX_TEXT_BYTES * 6 + 65_536;

/** JSON bodies only, up to 1 MB (a source's text: its own limit), read for the methods that carry one. */
export function jsonBodies(): Koa.Middleware {
  const parseBody = bodyParser({ enableTypes: ['json'], jsonLimit: BODY_LIMIT, encoding: 'utf-8', parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] });
  const parseSourceBody = bodyParser({ enableTypes: ['json'], jsonLimit: SOURCE_BODY_LIMIT, encoding: 'utf-8', parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] });
  return compose<Koa.ParameterizedContext>([
    async (ctx, next) => {
      const hasBody = Number(ctx.get('content-length') || 0) > 0 || !!ctx.get('transfer-encoding');
      if (hasBody && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && !ctx.is('application/json', '+json')) {
        throw new ApiError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json.');
      }
      await next();
    },
    (ctx, next) => (/^\/api\/sources(\/[^/]*)?$/.test(ctx.path) ? parseSourceBody : parseBody)(ctx, next),
  ]);
}

/** The API under /api: every registered route through the one caller (callRoute). */
export function apiRoutes(deps: Deps): Koa.Middleware {
  const router = new Router({ prefix: '/api' });
  for (const def of bySpecificity(registeredRoutes().filter((r) => !r.accountSystem))) {
    router.register(def.path, [def.method], async (ctx) => {
      ctx.state.route = def;
      // The REST front door: the credentials of the request (a key, or the session cookie) become the principal here.
      const caller = await outsideReadScope(() => resolveCaller(deps, ctx.headers));
      const as = { caller, ...namedIn(ctx.headers), ip: ctx.ip };
      const answer = await callRoute(deps, def, { as, params: ctx.params, query: { ...ctx.query }, body: ctx.request.body, koa: ctx });
      if (answer.warnings.length) {
        ctx.set('Deprecation', 'true');
        ctx.set('Link', '</api/guides/compatibility>; rel="deprecation"; type="text/markdown"');
      }
      ctx.status = answer.status;
      if (answer.result !== undefined) ctx.body = answer.result;
    });
  }
  return compose([router.routes(), router.allowedMethods({ throw: false })] as Koa.Middleware[]);
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

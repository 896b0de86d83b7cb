import type Koa from 'koa';
import { toNodeHandler } from 'better-auth/node';
import { guardAccountRoute } from './guard';
import { registeredRoutes } from '../../api/registry';
import type { Deps } from '../../deps';
import { accountSystem, AUTH_BASE_PATH } from '../../services/accounts';
import { inOAuthShape, isOAuthEndpoint, refusalInOurShape } from './refusals';
import { toApiError } from '../../api/dispatch';
import { isRetryable } from '../../errors';
import { clientConnectionsRemoved } from '../../services/connections';

/**
 * The library answers a refresh whose token is gone "session not found". Removing a connection
 * deletes its refresh tokens: when the client's connections were all removed, the host is told so.
 */
async function explainEndedRefresh(deps: Deps, request: Request, res: Response): Promise<Response> {
  const body = (await res.clone().json().catch(() => null)) as Record<string, unknown> | null;
  if (body?.error !== 'invalid_grant' || body.error_description !== 'session not found') return res;
  const form = new URLSearchParams(await request.text().catch(() => ''));
  const clientId = form.get('client_id') ?? '';
  const removed = clientId ? await clientConnectionsRemoved(deps, clientId.slice(0, 200)) : false;
  const description = removed
    ? 'This connection was removed (the person disconnected the assistant), and its refresh token with it: connect the assistant again.'
    : 'This refresh token is unknown, was used already or expired: connect the assistant again.';
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify({ ...body, error_description: description }), { status: res.status, headers });
}

/**
 * The account system (spec §5.1) answers under /api/auth/* itself, before any body is read: sign-up,
 * sign-in, sign-out, session, password reset. The /api/auth routes of our own registry (DELETE
 * /api/auth/me) go on to the API. Its refusals leave in the API's one error shape (refusals.ts).
 */
export function accountDoor(deps: Deps): Koa.Middleware {
  const ownAuthPaths = new Set(registeredRoutes().filter((r) => !r.accountSystem && `/api${r.path}`.startsWith(`${AUTH_BASE_PATH}/`)).map((r) => `/api${r.path}`));
  const handler = toNodeHandler(async (request: Request) => {
    const oauth = isOAuthEndpoint(new URL(request.url).pathname);
    const copy = oauth ? request.clone() : null;
    const res = await refusalInOurShape(await accountSystem(deps).auth.handler(request), oauth);
    return copy && res.status === 400 ? explainEndedRefresh(deps, copy, res) : res;
  });
  return async (ctx, next) => {
    if (!ctx.path.startsWith(`${AUTH_BASE_PATH}/`) || ownAuthPaths.has(ctx.path)) return next();
    try {
      await guardAccountRoute(deps, ctx);
    } catch (err) {
      if (!isOAuthEndpoint(ctx.path)) throw err;
      // A host shows error_description (a 429 without it is a blank box): the refusal in OAuth's shape.
      const refusal = toApiError(err);
      ctx.status = refusal.status;
      ctx.body = inOAuthShape(refusal.toBody(), refusal.status);
      if (isRetryable(refusal.code)) ctx.set('Retry-After', String(refusal.details.retryAfter ?? 1));
      return;
    }
    ctx.respond = false;
    try {
      await handler(ctx.req, ctx.res);
    } catch (err) {
      if (ctx.res.headersSent) throw err;
      ctx.respond = true;
      throw err;
    }
  };
}

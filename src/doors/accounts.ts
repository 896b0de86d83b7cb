import type Koa from 'koa';
import { toNodeHandler } from 'better-auth/node';
import { guardAccountRoute } from '../api/middleware/accountGuard';
import { registeredRoutes } from '../api/registry';
import type { Deps } from '../deps';
import { accountSystem, AUTH_BASE_PATH } from '../services/accounts';
import { refusalInOurShape } from './accountRefusals';

/**
 * The account system (spec §5.1) answers under /api/auth/* itself, before any body is read: sign-up,
 * sign-in, sign-out, session, password reset. The /api/auth routes of our own registry (DELETE
 * /api/auth/me) go on to the API. Its refusals leave in the API's one error shape (accountRefusals.ts).
 */
export function accountDoor(deps: Deps): Koa.Middleware {
  const ownAuthPaths = new Set(registeredRoutes().filter((r) => !r.accountSystem && `/api${r.path}`.startsWith(`${AUTH_BASE_PATH}/`)).map((r) => `/api${r.path}`));
  const handler = toNodeHandler((request: Request) => accountSystem(deps).auth.handler(request).then(refusalInOurShape));
  return async (ctx, next) => {
    if (!ctx.path.startsWith(`${AUTH_BASE_PATH}/`) || ownAuthPaths.has(ctx.path)) return next();
    await guardAccountRoute(deps, ctx);
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

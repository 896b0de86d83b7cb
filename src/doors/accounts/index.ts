import type Koa from 'koa';
import compose from 'koa-compose';
import { registerSessions } from '../../api/sessions';
import type { Deps } from '../../deps';
import { configureMailer } from '../../services/accounts';
import { accountDoor } from './authSystem';
import { accountPages } from './door';
import { cors } from './guard';
import { oauthPages } from './oauthPages';
import { sessionOf } from './session';

/**
 * The account edge (issue 67), one place: the session reading (session.ts, lent to the API through
 * src/api/sessions.ts), the guard in front of the account system (guard.ts: CORS, limits, the bounded
 * body), the account system's handler under /api/auth (authSystem.ts, refusals in our shape by
 * refusals.ts), the OAuth discovery documents and pages (oauthPages.ts, authFlow.ts), and the account
 * pages (door.ts, drawn by pages.ts). Forms and page headers are the shared ones of src/edge.
 */
export function accountEdge(deps: Deps): Koa.Middleware {
  registerSessions({ sessionOf });
  // Account mail (password reset): SMTP from configuration; start-up says so when reset is disabled.
  configureMailer(deps.config);
  return compose<Koa.ParameterizedContext>([
    // CORS for browser-based MCP hosts (metadata, registration, token, /mcp): preflights answered here.
    async (ctx, next) => {
      if (!cors(ctx)) await next();
    },
    accountDoor(deps),
    // The OAuth discovery documents and the sign-in and consent pages (forms, not JSON).
    oauthPages(deps),
    // The account pages (sign-up, sign-in, sign-out, password reset, account deletion): forms on the account system.
    accountPages(deps),
  ]) as Koa.Middleware;
}


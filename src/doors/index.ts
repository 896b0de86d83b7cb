import Koa from 'koa';
import { answerEdge, apiRoutes, jsonBodies, securityHeaders, type AppOptions } from '../api/app';
import { mcpMiddleware } from '../api/mcp/server';
import { cors } from '../api/middleware/accountGuard';
import { serveReference } from '../api/reference';
import type { Deps } from '../deps';
import { configureMailer } from '../services/accounts';
import { webRoutes } from '../web';
import { accountDoor } from './accounts';
import { accountPages } from './accountPages';
import { oauthPages } from './oauthPages';

export type { AppOptions, ObservedResponse } from '../api/app';

/**
 * The front doors, side by side (issue 58): the account system (/api/auth), the OAuth pages, the MCP
 * connector (/mcp), the pages and the API (/api). Each resolves its caller its own way (a session or
 * a key, an OAuth grant, a visitor's credentials) and acts through the one in-process caller
 * (src/api/dispatch.ts callRoute); none of them imports another. Koa app factory (no listen): used by
 * main and by the tests through real HTTP.
 */
export function createApp(deps: Deps, opts: AppOptions = {}): Koa {
  // X-Forwarded-For is believed only from the configured proxy hops (TRUST_PROXY_HOPS; none by default):
  // the client address is then the one the outermost trusted proxy saw, and a caller cannot spoof it.
  const hops = deps.config.TRUST_PROXY_HOPS;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  app.context.deps = deps;
  // Account mail (password reset): SMTP from configuration; start-up says so when reset is disabled.
  configureMailer(deps.config);
  app.use(securityHeaders);
  app.use(answerEdge(opts));
  // CORS for browser-based MCP hosts (metadata, registration, token, /mcp): preflights answered here.
  app.use(async (ctx, next) => {
    if (!cors(ctx)) await next();
  });
  app.use(accountDoor(deps));
  // The OAuth discovery documents and the sign-in and consent pages (forms, not JSON).
  app.use(oauthPages(deps));
  // The MCP connector (spec §5.1) at /mcp: its transport reads the body itself.
  app.use(mcpMiddleware(deps));
  app.use(serveReference);
  // The account pages (sign-up, sign-in, sign-out, password reset, account deletion): forms on the account system.
  app.use(accountPages(deps));
  // The pages read their own forms (urlencoded, src/web/forms.ts); the API's bodies are JSON only.
  app.use(webRoutes(deps));
  app.use(jsonBodies());
  app.use(apiRoutes(deps));
  return app;
}

import Koa from 'koa';
import { answerEdge, apiRoutes, jsonBodies, type AppOptions } from '../api/app';
import { mcpMiddleware } from '../api/mcp/server';
import { serveReference } from '../api/reference';
import type { Deps } from '../deps';
import { securityHeaders } from '../edge/headers';
import { webRoutes } from '../web';
import { accountEdge } from './accounts';

export type { AppOptions, ObservedResponse } from '../api/app';

/**
 * The front doors, side by side (issue 58): the account edge (src/doors/accounts: /api/auth, the
 * OAuth pages, the account pages), the MCP connector (/mcp), the pages and the API (/api). Each
 * resolves its caller its own way (a session or a key, an OAuth grant, a visitor's credentials) and
 * acts through the one in-process caller
 * (src/api/dispatch.ts callRoute); none of them imports another. Koa app factory (no listen): used by
 * main and by the tests through real HTTP.
 */
export function createApp(deps: Deps, opts: AppOptions = {}): Koa {
  // X-Forwarded-For is believed only from the configured proxy hops (TRUST_PROXY_HOPS; none by default):
  // the client address is then the one the outermost trusted proxy saw, and a caller cannot spoof it.
  const hops = deps.config.TRUST_PROXY_HOPS;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  app.context.deps = deps;
  app.use(securityHeaders);
  app.use(answerEdge(opts));
  // The account edge (src/doors/accounts): CORS for MCP hosts, /api/auth, the OAuth pages, the account pages.
  app.use(accountEdge(deps));
  // The MCP connector (spec §5.1) at /mcp: its transport reads the body itself.
  app.use(mcpMiddleware(deps));
  app.use(serveReference);
  // The pages read their own forms (urlencoded, src/edge/forms.ts); the API's bodies are JSON only.
  app.use(webRoutes(deps));
  app.use(jsonBodies());
  app.use(apiRoutes(deps));
  return app;
}

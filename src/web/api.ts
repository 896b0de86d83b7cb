import type { IncomingHttpHeaders } from 'node:http';
import type Koa from 'koa';
import type { Deps } from '../deps';
import { runRoute } from '../api/dispatch';
import { registeredRoutes, type RouteDef } from '../api/registry';

/**
 * A page reads through the API itself, in process: the same route definition, caller, access
 * checks, per-metric permissions and presenter as GET /api/... for the same visitor. A page can
 * therefore never show a number the API would refuse, or one that differs from the API's.
 */
export interface Visitor {
  /** The workspace slug or id from the page's path: sent as X-Workspace-Id (null on the site-wide pages). */
  workspace: string | null;
  /** ?view=<token>: sent as X-View-Link. */
  viewToken: string | null;
  headers: IncomingHttpHeaders;
  /** The client address (the rate limit's bucket for an anonymous visitor). */
  ip: string;
  /** A page view counts once against the visitor's rate limit, on its first API call. */
  counted: boolean;
}

const MAX_TOKEN = 200;

/**
 * The visitor of this page: its own credentials when it sends any (the session cookie of a signed-in
 * person, or X-Agent-Key / X-API-Key), the view link, the workspace.
 */
export function visitorOf(ctx: Koa.Context, workspace: string | null): Visitor {
  const view = typeof ctx.query.view === 'string' && ctx.query.view.length <= MAX_TOKEN ? ctx.query.view.trim() || null : null;
  const headers: IncomingHttpHeaders = workspace ? { 'x-workspace-id': workspace } : {};
  for (const name of ['cookie', 'x-agent-key', 'x-api-key']) {
    const v = ctx.get(name);
    if (v) headers[name] = v;
  }
  if (view) headers['x-view-link'] = view;
  return { workspace, viewToken: view, headers, ip: ctx.ip, counted: false };
}

function routeOf(method: 'GET', path: string): RouteDef<unknown, unknown, unknown> {
  const def = registeredRoutes().find((r) => r.method === method && r.path === path);
  if (!def) throw new Error(`No API route ${method} ${path}: the page names a route that does not exist.`);
  return def;
}

/** A context for the handler: it reads the visitor's headers and may set headers that nobody sends. */
function handlerContext(headers: IncomingHttpHeaders, ip: string): Koa.Context {
  const get = (name: string): string => {
    const v = headers[name.toLowerCase()];
    return (Array.isArray(v) ? v[0] : v) ?? '';
  };
  return { get, set: () => undefined, ip, request: { socket: {} } } as unknown as Koa.Context;
}

/** GET /api<path> for this visitor, answered in process; refusals throw the API's own errors. */
export async function apiGet<T>(deps: Deps, visitor: Visitor, path: string, input: { params?: Record<string, string>; query?: Record<string, string> } = {}): Promise<T> {
  const limit = !visitor.counted;
  visitor.counted = true;
  const { result } = await runRoute(
    deps,
    routeOf('GET', path),
    { headers: visitor.headers, params: input.params ?? {}, query: input.query ?? {}, body: undefined, koa: handlerContext(visitor.headers, visitor.ip) },
    { limit },
  );
  return result as T;
}

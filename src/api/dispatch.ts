import type { IncomingHttpHeaders } from 'node:http';
import type Koa from 'koa';
import type { Deps } from '../deps';
import { readableNumbers } from '../domain/readable';
import { ApiError, DomainError } from '../errors';
import { outsideReadScope, readScope } from '../readScope';
import { requireCapability, requireScope, resolveAccess, resolveCaller } from './access';
import { limitRequest } from './middleware/rateLimit';
import { parseWith, type Call, type RouteDef } from './registry';

/** What one call of a route is made of: the router's request, or a page's call of the API in-process (src/web). */
export interface RouteRequest {
  headers: IncomingHttpHeaders;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  /** The Koa context the handler may read headers from and set headers on. */
  koa: Koa.Context;
}

export interface RouteAnswer {
  /** The status the handler chose, or 0 for the default (200, or 204 without a result). */
  status: number;
  result: unknown;
  warnings: string[];
}

/** No body, or an empty JSON object: what a route without a body schema accepts. */
function emptyBody(b: unknown): boolean {
  return b === undefined || b === null || (typeof b === 'object' && !Array.isArray(b) && Object.keys(b).length === 0);
}

/**
 * An act (a write) without credentials (spec §5, §7): 403 identity_required when the request stands in a
 * workspace the anonymous caller may read (a public one named by X-Workspace-Id, or a view link's):
 * it is known there and only lacks an identity to act. Otherwise 401 authentication_required: no
 * credentials where credentials are the only way in.
 */
async function refuseAnonymous(deps: Deps, def: RouteDef<unknown, unknown, unknown>, req: RouteRequest): Promise<never> {
  if (def.auth.capability && def.method !== 'GET') {
    const access = await resolveAccess(deps, null, req.headers, { ...def.auth, workspaceOptional: true }).catch(() => null);
    if (access?.caps.has('read')) {
      throw new ApiError('identity_required', `Acting here needs an identity: ${access.viewLink ? 'a view link only reads. ' : ''}Register (POST /api/agents/register) or send a key.`);
    }
  }
  throw new ApiError('authentication_required', 'This endpoint needs credentials: send X-Agent-Key (or X-API-Key).');
}

/**
 * One route, end to end: caller, rate limit (unless `limit` is false: a page counts once, not per
 * call it makes), scope, validation, workspace access and capability, then the handler. The router
 * and the web pages both go through here, so a page can never show what the API would refuse.
 */
export async function runRoute(deps: Deps, def: RouteDef<unknown, unknown, unknown>, req: RouteRequest, opts: { limit?: boolean } = {}): Promise<RouteAnswer> {
  const caller = await outsideReadScope(() => resolveCaller(deps, req.headers));
  if (opts.limit !== false) await outsideReadScope(() => limitRequest(deps, caller, req.koa));
  if (def.auth.identity && !caller) await outsideReadScope(() => refuseAnonymous(deps, def, req));
  if (def.auth.sessionOnly && !caller?.accountId) {
    throw new ApiError('session_required', 'Only a browser session may do this: sign in (POST /api/auth/sign-in/email) and send the session cookie. No key can, whatever its scopes, and no scope grants it.', { requiredCapabilities: ['session'] });
  }
  if (def.auth.label === 'platform admin' && !caller?.isMaster) {
    throw new ApiError('not_authorized', 'Only the platform operator (master key) may do this.', { requiredCapabilities: ['platform'] });
  }
  if (caller) requireScope(caller, def.auth);
  const params = parseWith(def.params, req.params, 'path');
  const query = parseWith(def.query, req.query, 'query');
  const body = def.bodyParsedByHandler ? (req.body ?? {}) : parseWith(def.body, req.body ?? {}, 'body');
  if (!def.body && !emptyBody(req.body)) {
    throw new DomainError('validation_failed', `${def.method} ${def.path.replace(/:(\w+)/g, '{$1}')} takes no body: send none, or {}.`);
  }
  const pathWorkspace = def.auth.workspaceParam ? (params as Record<string, string>)[def.auth.workspaceParam] : undefined;
  const access = def.auth.capability || def.auth.workspaceOptional ? await outsideReadScope(() => resolveAccess(deps, caller, req.headers, def.auth, pathWorkspace)) : null;
  if (def.auth.capability && access) requireCapability(caller, access, def.auth.capability);
  let status = 0;
  const warnings: string[] = [];
  const call: Call<unknown, unknown, unknown> = {
    deps,
    body,
    query,
    params,
    caller,
    access,
    koa: req.koa,
    identity: () => {
      if (!caller) throw new ApiError('authentication_required', 'This endpoint needs credentials: send X-Agent-Key (or X-API-Key).');
      return caller;
    },
    workspace: () => {
      if (!access) throw new ApiError('workspace_required', 'This endpoint is workspace-scoped: send X-Workspace-Id with a workspace id or slug.');
      return access;
    },
    require: (cap) => {
      if (!access) throw new ApiError('workspace_required', 'This endpoint is workspace-scoped: send X-Workspace-Id with a workspace id or slug.');
      requireCapability(caller, access, cap);
    },
    status: (code) => {
      status = code;
    },
    deprecate: (warning) => {
      if (!warnings.includes(warning)) warnings.push(warning);
    },
  };
  let result: unknown;
  try {
    // A GET's handler may read a replica that has replayed past every acknowledged commit (db/replicas.ts).
    result = def.method === 'GET' && !def.readsPrimary ? await readScope(() => def.handler(call)) : await def.handler(call);
  } catch (err) {
    const errStatus = err instanceof DomainError ? def.errorStatus?.[err.code] : undefined;
    if (err instanceof DomainError && errStatus) throw new ApiError(err.code, err.message, err.details, errStatus);
    throw err;
  }
  return { status, result: readableNumbers(result), warnings };
}

import type Koa from 'koa';
import type { Deps } from '../deps';
import { readableNumbers } from '../domain/readable';
import { ApiError, DomainError } from '../errors';
import { isQueueLoss, isTransient, pgCode } from '../failures';
import { outsideReadScope, readScope } from '../readScope';
import { callerCache } from '../services/access';
import { requireCapability, requireScope, resolveAccess, type Caller } from './access';
import { limitRequest } from './middleware/rateLimit';
import { parseWith, type BodyIn, type Call, type ParamsIn, type QueryIn, type RouteDef } from './registry';

/**
 * Who acts, resolved at the front door (a key or a session by the API's edge, a connection's grant
 * by /mcp, the visitor's credentials by a page): a principal and what it names, never headers.
 */
export interface Acting {
  caller: Caller | null;
  /** The workspace named (X-Workspace-Id for a REST client, `workspace` for a tool, the page's path). */
  workspace: string | null;
  /** A view link's token (X-View-Link, ?view=). */
  viewToken: string | null;
  /** The client address: an anonymous caller's rate-limit bucket. */
  ip: string;
}

/**
 * What one call of a route is made of: the router's request, or an in-process caller's (callRoute),
 * typed by the route's schemas when the caller names a route of the table.
 */
export interface RouteRequest<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  as: Acting;
  params: P;
  query: Q;
  body: B;
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
    const access = await resolveAccess(deps, null, req.as, { ...def.auth, workspaceOptional: true }).catch(() => null);
    if (access?.caps.has('read')) {
      throw new ApiError('identity_required', `Acting here needs an identity: ${access.viewLink ? 'a view link only reads. ' : ''}Register (POST /api/agents/register) or send a key.`);
    }
  }
  throw new ApiError('authentication_required', 'This endpoint needs credentials: send X-Agent-Key (or X-API-Key).');
}

/**
 * `limit` false: not counted against the caller's rate limit; `checkOnly`: everything but the handler (a tool's
 * check before it asks); with it, `validate` false skips reading the params, query and body: only who may call
 * the route (its policy rule) is asked, whatever the request carries (the policies test walks every route so).
 */
export interface RunOptions {
  limit?: boolean;
  checkOnly?: boolean;
  validate?: boolean;
}

/**
 * One route, end to end: caller, rate limit (unless `limit` is false: a page counts once, not per
 * call it makes), scope, validation, workspace access and capability, then the handler. The router
 * and the web pages both go through here, so a page can never show what the API would refuse.
 */
export async function runRoute(deps: Deps, def: RouteDef<unknown, unknown, unknown>, req: RouteRequest, opts: RunOptions = {}): Promise<RouteAnswer> {
  const caller = req.as.caller;
  if (opts.limit !== false) await outsideReadScope(() => limitRequest(deps, caller, req.koa));
  if (def.auth.identity && !caller) await outsideReadScope(() => refuseAnonymous(deps, def, req));
  if (def.auth.sessionOnly && !caller?.accountId) {
    throw new ApiError('session_required', 'Only a browser session may do this: sign in (POST /api/auth/sign-in/email) and send the session cookie. No key can, whatever its scopes, and no scope grants it.', { requiredCapabilities: ['session'] });
  }
  if (def.auth.platformOnly && !caller?.isMaster) {
    throw new ApiError('not_authorized', 'Only the platform operator (master key) may do this.', { requiredCapabilities: ['platform'] });
  }
  if (caller) requireScope(caller, def.auth);
  const validate = !(opts.checkOnly && opts.validate === false);
  const params = validate ? parseWith(def.params, req.params, 'path') : req.params;
  const query = validate ? parseWith(def.query, req.query, 'query') : req.query;
  const body = def.bodyParsedByHandler || !validate ? (req.body ?? {}) : parseWith(def.body, req.body ?? {}, 'body');
  if (validate && !def.body && !emptyBody(req.body)) {
    throw new DomainError('validation_failed', `${def.method} ${def.path.replace(/:(\w+)/g, '{$1}')} takes no body: send none, or {}.`);
  }
  const pathWorkspace = def.auth.workspaceParam ? (params as Record<string, string>)[def.auth.workspaceParam] : undefined;
  const access = def.auth.capability || def.auth.workspaceOptional ? await outsideReadScope(() => resolveAccess(deps, caller, req.as, def.auth, pathWorkspace)) : null;
  if (def.auth.capability && access) requireCapability(caller, access, def.auth.capability);
  if (opts.checkOnly) return { status: 0, result: undefined, warnings: [] };
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

/** What an in-process caller gets back: the status the API would send, the typed body, the deprecation warnings. */
export interface Answer<R> {
  status: number;
  /** The route's response type (its zod schema's output); undefined on a 204. */
  result: R | undefined;
  warnings: string[];
}

/** What a call's handler may read of "headers" when no HTTP request carries it: what the caller named. */
export interface InProcess {
  idempotencyKey?: string | null;
}

/** A context for a handler called in process: it reads what the caller named, and sets headers nobody sends. */
export function inProcessContext(as: Acting, extra: InProcess = {}): Koa.Context {
  const named: Record<string, string> = {};
  if (as.workspace) named['x-workspace-id'] = as.workspace;
  if (as.viewToken) named['x-view-link'] = as.viewToken;
  if (extra.idempotencyKey) named['idempotency-key'] = extra.idempotencyKey;
  const get = (name: string): string => named[name.toLowerCase()] ?? '';
  const noop = () => undefined;
  return { get, set: noop, append: noop, ip: as.ip, request: { socket: {} }, response: { get: () => '' } } as unknown as Koa.Context;
}

/**
 * The one way to act as a caller: the route end to end (runRoute), then what the HTTP edge adds
 * around it: the status default, the deprecation warnings in the body, and this process's caller
 * cache dropped after a change that may alter access (other processes hear of it by NOTIFY). The
 * router, the pages and the MCP tools all call it, so each refuses exactly what the others refuse.
 */
export async function callRoute<B, Q, P, R, BI, DR>(
  deps: Deps,
  def: RouteDef<B, Q, P, R, BI, DR>,
  req: RouteRequest<ParamsIn<P>, QueryIn<Q>, BodyIn<BI> | undefined>,
  opts: RunOptions = {},
): Promise<Answer<R>> {
  // Trades and orders change no access, nor does a check that runs no handler.
  const mayChangeAccess = def.method !== 'GET' && !def.path.startsWith('/predictions/') && !opts.checkOnly;
  try {
    const answer = await runRoute(deps, def as unknown as RouteDef<unknown, unknown, unknown>, req as RouteRequest, opts);
    return withWarnings<R>(answer);
  } finally {
    if (mayChangeAccess) callerCache(deps).invalidate();
  }
}

/** The status default and the warnings merged into an object body; the body is the route's own (its schema's output). */
function withWarnings<R>(answer: RouteAnswer): Answer<R> {
  let result = answer.result;
  if (answer.warnings.length && result && typeof result === 'object' && !Array.isArray(result)) {
    const prior = (result as { warnings?: unknown }).warnings;
    result = { ...result, warnings: [...(Array.isArray(prior) ? prior : []), ...answer.warnings] };
  }
  return { status: answer.status || (result === undefined ? 204 : 200), result: result as R | undefined, warnings: answer.warnings };
}

/** Postgres refuses NUL bytes and untranslatable characters in text: the client's input, not our failure. */
const BAD_TEXT_CODES = new Set(['22021', '22P05']);

/** Any failure as the API answers it: a stable code and a sentence (the HTTP edge and the MCP tools both send this). */
export function toApiError(err: unknown): ApiError {
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

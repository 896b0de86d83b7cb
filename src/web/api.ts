import type { IncomingHttpHeaders } from 'node:http';
import type Koa from 'koa';
import type { Deps } from '../deps';
import { resolveCaller, type Caller } from '../api/access';
import { callRoute, inProcessContext, type Acting } from '../api/dispatch';
import type { BodyIn, ParamsIn, QueryIn, RouteDef } from '../api/registry';
import { getAgentsMe } from '../api/routes';
import { DomainError } from '../errors';

/** A route's answer type, for a page that keeps one (pages name the API through this module alone). */
export type { AnswerOf, QuoteOf } from '../api/registry';

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
  /** Each API call the page made and its time (the page's Server-Timing lists them: where a slow render went). */
  calls?: { route: string; ms: number }[];
  /**
   * What every visitor of one request shares (the page's and the header's): the principal is
   * resolved once, on the first API call, and the view counts once against the rate limit, however
   * many visitors the page draws.
   */
  request: { counted: boolean; caller?: Promise<Caller | null> };
}

/** The signed-in participant the header names: who, and their balance in credits. */
export interface Me {
  id: string;
  name: string;
  balance: number;
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
  const request = ((ctx.state as { webVisitor?: Visitor['request'] }).webVisitor ??= { counted: false });
  // One list per request, whichever visitor made the call: the response's Server-Timing reads it.
  ctx.state.webCalls ??= [];
  return { workspace, viewToken: view, headers, ip: ctx.ip, request, calls: ctx.state.webCalls as NonNullable<Visitor['calls']> };
}

/** Whether this visit counts against the rate limit (the request's first API call does). */
function counts(visitor: Visitor): boolean {
  const first = !visitor.request.counted;
  visitor.request.counted = true;
  return first;
}

/** The visitor's principal, resolved from its credentials once per page (a refused credential refuses the page). */
async function actingOf(deps: Deps, visitor: Visitor): Promise<Acting> {
  // The caller depends on the credentials only (a cookie or a key), the same for every visitor of the request.
  const caller = await (visitor.request.caller ??= resolveCaller(deps, visitor.headers));
  return { caller, workspace: visitor.workspace, viewToken: visitor.viewToken, ip: visitor.ip };
}

/** What a call names beside its route: its parameters, query and body as its schemas take them. */
export type CallInput<P, Q, BI> = { query?: QueryIn<Q>; body?: BodyIn<BI>; idempotencyKey?: string | null } & (string extends keyof ParamsIn<P>
  ? { params?: ParamsIn<P> }
  : { params: ParamsIn<P> });
/** The input argument: optional when the route has no path parameters. */
type InputArg<P, Q, BI> = string extends keyof ParamsIn<P> ? [input?: CallInput<P, Q, BI>] : [input: CallInput<P, Q, BI>];

/**
 * A read (GET /api<route>) for this visitor through the one in-process caller (callRoute), typed by
 * the route's schemas: its answer is the response schema's output. Refusals throw the API's own errors.
 */
export async function apiRead<B, Q, P, R, BI, DR>(deps: Deps, visitor: Visitor, def: RouteDef<B, Q, P, R, BI, DR>, ...[input]: InputArg<P, Q, BI>): Promise<R> {
  return (await call(deps, visitor, def, input ?? {})) as R;
}

/**
 * One call of the visitor through callRoute: counted once per request against the rate limit, and
 * timed for the page's Server-Timing.
 */
async function call<B, Q, P, R, BI, DR>(deps: Deps, visitor: Visitor, def: RouteDef<B, Q, P, R, BI, DR>, input: Partial<CallInput<P, Q, BI>>): Promise<R | undefined> {
  const limit = counts(visitor);
  const started = performance.now();
  try {
    const as = await actingOf(deps, visitor);
    const koa = inProcessContext(as, { idempotencyKey: input.idempotencyKey ?? undefined });
    const params = (input.params ?? {}) as ParamsIn<P>;
    const { result } = await callRoute(deps, def, { as, params, query: input.query ?? ({} as QueryIn<Q>), body: input.body, koa }, { limit });
    return result;
  } finally {
    visitor.calls?.push({ route: `${def.method} ${def.path}`, ms: performance.now() - started });
  }
}

/** Whether the visitor sends credentials that resolve to a participant (a session or a key). */
export async function signedIn(deps: Deps, visitor: Visitor): Promise<boolean> {
  return (await actingOf(deps, visitor)).caller !== null;
}

/**
 * An act of the visitor through the one in-process caller (callRoute): a route other than GET,
 * with its body and, for a money move, the Idempotency-Key the form was drawn with. Refusals throw
 * the API's own errors, which the page shows beside the form. The answer is the response schema's output.
 */
export async function apiAct<B, Q, P, R, BI, DR>(deps: Deps, visitor: Visitor, def: RouteDef<B, Q, P, R, BI, DR>, ...[input]: InputArg<P, Q, BI>): Promise<R> {
  return (await call(deps, visitor, def, input ?? {})) as R;
}

/**
 * The dry run of an act (its body with dryRun: true), for a form's review step: nothing is written,
 * and the answer is the route's dry-run schema's output.
 */
export async function apiQuote<B, Q, P, R, BI, DR>(deps: Deps, visitor: Visitor, def: RouteDef<B, Q, P, R, BI, DR>, input: CallInput<P, Q, BI> & { body: BodyIn<BI> }): Promise<unknown extends DR ? unknown : DR> {
  return (await call(deps, visitor, def, { ...input, body: { ...(input.body as object), dryRun: true } as BodyIn<BI> })) as unknown extends DR ? unknown : DR;
}

/**
 * The participant signed in by this request's session, for the header: GET /agents/me for the
 * visitor, in process. No cookie, no call; a session that ended (or any refusal) is no one.
 */
export async function signedInParticipant(deps: Deps, visitor: Visitor): Promise<Me | null> {
  if (!visitor.headers.cookie) return null;
  try {
    if (!(await signedIn(deps, visitor))) return null;
    const me = await apiRead(deps, visitor, getAgentsMe);
    return { id: me.id, name: me.name, balance: me.balance };
  } catch (err) {
    if (err instanceof DomainError) return null;
    throw err;
  }
}

import type Koa from 'koa';
import { z, type ZodType } from 'zod';
import type { Capability } from '../domain/capabilities';
import type { Deps } from '../deps';
import { DomainError, type ErrorCode } from '../errors';
import type { AuthRule } from './auth';
import type { Caller, WorkspaceAccess } from './access';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Call<B, Q, P> {
  deps: Deps;
  body: B;
  query: Q;
  params: P;
  caller: Caller | null;
  /** Present when the route is workspace-scoped (or named one optionally). */
  access: WorkspaceAccess | null;
  koa: Koa.Context;
  /** The caller, or 401. */
  identity(): Caller;
  /** The workspace access, or 400 workspace_required. */
  workspace(): WorkspaceAccess;
  require(cap: Capability): void;
  status(code: number): void;
  /**
   * The request used a superseded parameter: the answer carries a Deprecation header and, when
   * its body is an object, this sentence in `warnings`.
   */
  deprecate(warning: string): void;
}

/**
 * One route. B, Q, P, R are its body, query, path parameters and answer as its schemas output them;
 * BI is the body as a caller sends it (the body schema's input), DR a dry run's answer.
 */
export interface RouteDef<B = unknown, Q = unknown, P = unknown, R = unknown, BI = B, DR = unknown> {
  method: Method;
  path: string;
  auth: AuthRule;
  summary: string;
  body?: ZodType<B, BI>;
  /**
   * The handler validates the body itself (with `parseWith(body, ...)`) after a check that must come
   * first: POST /onboard answers 403 while paused whatever was sent. The schema still documents it.
   */
  bodyParsedByHandler?: true;
  query?: ZodType<Q>;
  params?: ZodType<P>;
  /**
   * Where this endpoint answers a catalog code with another status than the catalog's (spec §7:
   * insufficient_balance is 409 on transfers and credit moves). The edge's only status decision.
   */
  errorStatus?: Partial<Record<ErrorCode, number>>;
  /**
   * The success body's schema (zod, as the API shows it: credits as numbers, ISO strings). It feeds
   * the OpenAPI document, and the integration suite checks every response against it. Omit only for
   * 204 and non-JSON answers. Its output type is what an in-process caller gets back (dispatch.ts callRoute).
   */
  response?: ZodType<R>;
  /** The catalog codes this route can answer with, beyond validation_failed and the auth errors. */
  errors?: readonly ErrorCode[];
  /** A creation's dry run (issue 28): answered with 200 and this schema; nothing is written. */
  dryRunResponse?: ZodType<DR>;
  /** The success status when it is not 200 (201 on creation); routes without a response schema answer 204. */
  successStatus?: number;
  /** The answer carries an ETag and is 304 (no body) when the client sends it back in If-None-Match. */
  conditional?: true;
  /** The success body's media type when it is not JSON (a guide is text/markdown). */
  responseType?: string;
  /** The whole route is superseded (its replacement is named in the summary). */
  deprecated?: boolean;
  /**
   * The route takes an optional Idempotency-Key header (a money move: the handler reads it with
   * idempotencyKey(c)); the OpenAPI document declares the header on it.
   */
  idempotent?: boolean;
  /**
   * The account system (Better Auth, under /api/auth) answers this route itself: it is in the catalog
   * and the OpenAPI document, and the router never mounts it (its handler is never called).
   */
  accountSystem?: true;
  /**
   * A GET that reads the primary, never a replica (issue 60): a money decision (a balance), or an
   * answer that lasts (a stream). Every other GET's handler runs as a read scope (db/replicas.ts).
   */
  readsPrimary?: true;
  handler: (c: Call<B, Q, P>) => Promise<unknown>;
}

/** Any route of the table, whatever its schemas: what the router, /help and the tools walk. */
export type AnyRoute = RouteDef<any, any, any, any, any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const routes: AnyRoute[] = [];

/**
 * Every route registers here once: the router and GET /help are both built from this list. Each is
 * also exported as a value (routes/index.ts, named by routeName) for the callers that name it.
 */
export function defineRoute<B = undefined, Q = Record<string, never>, P = Record<string, never>, R = unknown, BI = B, DR = unknown>(def: RouteDef<B, Q, P, R, BI, DR>): RouteDef<B, Q, P, R, BI, DR> {
  if (routes.some((r) => r.method === def.method && r.path === def.path)) throw new Error(`route ${def.method} ${def.path} defined twice`);
  routes.push(def);
  return def;
}

export function registeredRoutes(): readonly RouteDef<unknown, unknown, unknown>[] {
  return routes;
}

/**
 * The route table's name of a route (issue 67): the method, then each path segment in PascalCase,
 * a parameter as By<Name>: GET /agents/:id/balance is getAgentsByIdBalance.
 */
export function routeName(method: Method, path: string): string {
  const segments = path.split('/').filter(Boolean).map((seg) => {
    const words = seg.replace(/^:/, '').split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');
    return seg.startsWith(':') ? `By${words}` : words;
  });
  return method.toLowerCase() + segments.join('');
}

/** What a route answers: its response schema's output (unknown without one). */
export type AnswerOf<D> = D extends RouteDef<any, any, any, infer R, any, any> ? R : never; // eslint-disable-line @typescript-eslint/no-explicit-any
/** A route's dry-run answer (its `dryRunResponse` schema's output). */
export type QuoteOf<D> = D extends RouteDef<any, any, any, any, any, infer DR> ? DR : never; // eslint-disable-line @typescript-eslint/no-explicit-any

/** 0 extends 1 & T only for any; unknown extends T for unknown: a route whose schemas are not known here. */
type Untyped<T> = 0 extends 1 & T ? true : unknown extends T ? true : false;

/** What a caller sends as path parameters: each as the string the URL would carry. */
export type ParamsIn<P> = Untyped<P> extends true ? Record<string, string> : string extends keyof P ? Record<string, never> : { [K in keyof P]: string };
/** What a caller sends as the query: its fields as the URL's strings. */
export type QueryIn<Q> = Untyped<Q> extends true ? Record<string, unknown> : string extends keyof Q ? Record<string, never> : { [K in keyof Q]?: string };
/**
 * What a caller sends as the body: the body schema's fields, each value the route's to judge (a page
 * sends what the person typed, and shows the API's own refusal of it). A misnamed field fails to compile.
 */
export type BodyIn<BI> = Untyped<BI> extends true ? unknown : BI extends object ? { [K in keyof BI]?: unknown } : BI;

/** One readable sentence from zod issues, plus the issues for programs. */
export function validationError(where: 'body' | 'query' | 'path', err: z.ZodError): DomainError {
  const issues = err.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const first = issues[0];
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return new DomainError('validation_failed', `${refusedPart(where, first.path)}: ${first.message.replace(/\.$/, '')}${more}.`, { issues });
}

/** "The body field "x" is refused", "The query is refused": the start of every validation sentence. */
function refusedPart(where: 'body' | 'query' | 'path', path: string): string {
  return path ? `The ${where} field "${path}" is refused` : `The ${where} is refused`;
}

/** The object schema a body is checked against (through .optional() and a pipe's input), if it is one. */
function objectOf(schema: ZodType | undefined): z.ZodObject | null {
  let s: unknown = schema;
  for (let i = 0; i < 4 && s; i++) {
    if (s instanceof z.ZodObject) return s;
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap();
    else if (s instanceof z.ZodPipe) s = s.in;
    else return null;
  }
  return null;
}

/**
 * One input policy (issue 57, docs/guides/compatibility.md): a body field the endpoint does not take
 * is refused with 400, on every route, never dropped in silence. A loose schema (catchall) names its
 * own extras.
 */
function refuseUnknownFields(schema: ZodType | undefined, value: unknown): void {
  const obj = objectOf(schema);
  if (!obj || value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const catchall = obj.def.catchall;
  if (catchall && !(catchall instanceof z.ZodNever)) return;
  const known = Object.keys(obj.shape);
  const unknown = Object.keys(value).filter((k) => !known.includes(k));
  if (!unknown.length) return;
  const list = known.length ? `it takes ${known.join(', ')}` : 'it takes no fields';
  throw new DomainError('validation_failed', `${refusedPart('body', unknown[0])}: this endpoint does not take it (${list}).`, {
    issues: unknown.map((k) => ({ path: k, message: 'is not a field of this body' })),
  });
}

/** A lone surrogate (half of a UTF-16 pair), or U+FFFD: what invalid UTF-8 bytes decode to. */
const BAD_TEXT = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\uFFFD/;

/** The path of the first string (key or value) that is not valid Unicode text, or null. */
export function badTextPath(value: unknown, path: string[] = [], depth = 0): string[] | null {
  if (typeof value === 'string') return BAD_TEXT.test(value) ? path : null;
  if (depth > 64 || value === null || typeof value !== 'object') return null;
  for (const [k, v] of Object.entries(value)) {
    if (BAD_TEXT.test(k)) return [...path, k];
    const found = badTextPath(v, [...path, k], depth + 1);
    if (found) return found;
  }
  return null;
}

export function parseWith<T>(schema: ZodType<T> | undefined, value: unknown, where: 'body' | 'query' | 'path'): T {
  // One rule for every text field: refused, never stored as replacement characters.
  const bad = badTextPath(value);
  if (bad) {
    throw new DomainError('validation_failed', `${refusedPart(where, bad.join('.'))}: text must be valid UTF-8 (no invalid bytes, lone surrogates or U+FFFD replacement characters).`, {
      issues: [{ path: bad.join('.'), message: 'invalid text' }],
    });
  }
  if (!schema) return value as T;
  if (where === 'body') refuseUnknownFields(schema, value);
  const r = schema.safeParse(value);
  if (!r.success) throw validationError(where, r.error);
  return r.data;
}

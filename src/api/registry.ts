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

export interface RouteDef<B = unknown, Q = unknown, P = unknown> {
  method: Method;
  path: string;
  auth: AuthRule;
  summary: string;
  body?: ZodType<B>;
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
   * 204 and non-JSON answers.
   */
  response?: ZodType;
  /** The catalog codes this route can answer with, beyond validation_failed and the auth errors. */
  errors?: readonly ErrorCode[];
  /** The success status when it is not 200 (201 on creation); routes without a response schema answer 204. */
  successStatus?: number;
  /** The success body's media type when it is not JSON (a guide is text/markdown). */
  responseType?: string;
  /** The whole route is superseded (its replacement is named in the summary). */
  deprecated?: boolean;
  /**
   * The route takes an optional Idempotency-Key header (a money move: the handler reads it with
   * idempotencyKey(c)); the OpenAPI document declares the header on it.
   */
  idempotent?: boolean;
  handler: (c: Call<B, Q, P>) => Promise<unknown>;
}

const routes: RouteDef<any, any, any>[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every route registers here once: the router and GET /help are both built from this list. */
export function defineRoute<B = undefined, Q = Record<string, never>, P = Record<string, never>>(def: RouteDef<B, Q, P>): RouteDef<B, Q, P> {
  if (routes.some((r) => r.method === def.method && r.path === def.path)) throw new Error(`route ${def.method} ${def.path} defined twice`);
  routes.push(def);
  return def;
}

export function registeredRoutes(): readonly RouteDef<unknown, unknown, unknown>[] {
  return routes;
}

/** One readable sentence from zod issues, plus the issues for programs. */
export function validationError(where: 'body' | 'query' | 'path', err: z.ZodError): DomainError {
  const issues = err.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const first = issues[0];
  const field = first.path ? `${where} field "${first.path}"` : `the ${where}`;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return new DomainError('validation_failed', `Invalid ${field}: ${first.message}${more}.`, { issues });
}

export function parseWith<T>(schema: ZodType<T> | undefined, value: unknown, where: 'body' | 'query' | 'path'): T {
  if (!schema) return value as T;
  const r = schema.safeParse(value);
  if (!r.success) throw validationError(where, r.error);
  return r.data;
}

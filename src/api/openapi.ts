import { z, type ZodType } from 'zod';
import { ERROR_CATALOG, isRetryable, type ErrorCode } from '../errors';
import { AUTH_LEGEND, requirementOf, type AuthRule } from './auth';
import { registeredRoutes, type RouteDef } from './registry';

/**
 * The OpenAPI 3.1 document, generated from the same registry as GET /help: every route's zod
 * schemas (the input side for requests, the output side for responses), its auth rule and scopes,
 * and the catalog codes it can answer with. JSON Schema 2020-12 is OAS 3.1's own dialect.
 */

type Json = Record<string, unknown>;
type AnyRoute = RouteDef<unknown, unknown, unknown>;

/** Codes any route may answer with, whatever it declares. */
const ALWAYS: readonly ErrorCode[] = ['validation_failed', 'malformed_json', 'unsupported_media_type', 'payload_too_large', 'rate_limited', 'service_unavailable', 'internal_error'];
const IDENTITY: readonly ErrorCode[] = ['authentication_required', 'invalid_credentials', 'scope_denied'];
const WORKSPACE: readonly ErrorCode[] = ['workspace_required', 'workspace_not_found', 'workspace_locked', 'not_authorized'];

/** The codes a route can answer with: the ones it declares plus those its auth rule implies. */
export function errorCodesOf(r: AnyRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>([...ALWAYS, ...(r.errors ?? [])]);
  if (r.auth.identity || r.auth.label !== '-') for (const c of IDENTITY) codes.add(c);
  if (r.auth.capability || r.auth.workspaceOptional || r.auth.workspaceParam) for (const c of WORKSPACE) codes.add(c);
  // An anonymous act in a workspace it may read (spec §7): 403 identity_required.
  if (r.auth.capability || r.auth.workspaceOptional) codes.add('identity_required');
  if (r.auth.platformOnly) codes.add('not_authorized');
  if (r.auth.sessionOnly) codes.add('session_required');
  return [...codes].filter((c) => !('retired' in ERROR_CATALOG[c]));
}

export const statusOf = (r: AnyRoute, code: ErrorCode): number => r.errorStatus?.[code] ?? ERROR_CATALOG[code].status;

/** The success status a route answers with: declared, else 204 without a body schema, else 200. */
export function successStatusOf(r: AnyRoute): number {
  return r.successStatus ?? (r.response ? 200 : 204);
}

export const openApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
export const operationIdOf = (r: AnyRoute) =>
  r.method.toLowerCase() +
  openApiPath(r.path)
    .split(/[/{}_-]+/)
    .filter(Boolean)
    .map((s) => s[0].toUpperCase() + s.slice(1))
    .join('');

/** Converts one zod schema; named sub-schemas (meta id) are hoisted into components. */
class SchemaSink {
  readonly components: Record<string, Json> = {};

  convert(schema: ZodType, io: 'input' | 'output'): Json {
    const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
    delete out.$schema;
    const defs = (out.$defs ?? {}) as Record<string, Json>;
    delete out.$defs;
    const suffix = io === 'input' ? 'Input' : '';
    const rename = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rename);
      if (!node || typeof node !== 'object') return node;
      const o: Json = {};
      // A date-time's format says it all; zod's equivalent regex only bloats the document.
      const isDateTime = (node as Json).format === 'date-time';
      for (const [k, v] of Object.entries(node)) {
        if (isDateTime && k === 'pattern') continue;
        o[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/') ? `#/components/schemas/${v.slice(8)}${suffix}` : rename(v);
      }
      return o;
    };
    for (const [name, def] of Object.entries(defs)) this.components[name + suffix] = rename(def) as Json;
    return rename(out) as Json;
  }
}

export const ERROR_SCHEMA: Json = {
  type: 'object',
  description: 'Every refusal: a sentence for people, a stable code for programs, a link to the code\'s documentation, and details named per code.',
  properties: {
    error: { type: 'string', description: 'A sentence; its wording may change, branch on code.' },
    code: { type: 'string', enum: Object.keys(ERROR_CATALOG) },
    doc_url: { type: 'string' },
    issues: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } }, required: ['path', 'message'] } },
    requiredCapabilities: { type: 'array', items: { type: 'string' } },
    requiredScopes: { type: 'array', items: { type: 'string' } },
    retryAfter: { type: 'number' },
  },
  required: ['error', 'code', 'doc_url'],
  additionalProperties: true,
};

const SECURITY_SCHEMES: Json = {
  agentKey: { type: 'apiKey', in: 'header', name: 'X-Agent-Key', description: "A participant's key (from POST /agents/register, /onboard or /agents/{id}/keys); its scopes limit the routes it can call." },
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The master key of the instance (platform operator), or a participant key sent under this name.' },
  session: { type: 'apiKey', in: 'cookie', name: 'mpps.session_token', description: 'The session cookie of the account system (POST /api/auth/sign-in/email; __Secure-mpps.session_token over https). Bypasses key scopes.' },
  viewLink: { type: 'apiKey', in: 'header', name: 'X-View-Link', description: 'A view-link token: read-only access to one workspace, no key needed.' },
};

const workspaceHeader: Json = {
  name: 'X-Workspace-Id',
  in: 'header',
  required: false,
  description: 'The workspace the request acts in: its id or slug (default: the key\'s workspace, else the caller\'s highest-priority membership).',
  schema: { type: 'string' },
};

const idempotencyHeader: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Optional, 1 to 200 characters, per caller: the same key with the same body answers the first outcome again (idempotentReplay: true) and moves nothing twice; the same key with another body, or on another endpoint, is 409 idempotency_key_reuse.',
  schema: { type: 'string', minLength: 1, maxLength: 200 },
};

/** One line per tag (the first path segment): what the group of operations is for. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  auth: 'The account system: sign-up, sign-in and sign-out, the session, password reset (a session from POST /api/auth/sign-in/email), and deleting the account.',
  connections: "The person's connected AI assistants (MCP over OAuth): each one's calls, what it must ask before acting, and disconnecting it.",
  benchmark: 'How well the markets forecast: the error of the final consensus by how long a book traded, and the decision scorecard.',
  leaderboard: 'Standings over public workspaces by earnings, calibration, accuracy or volume.',
  seasons: 'Seasons: a period with its own standings, frozen at its end (the platform operator creates and moves them).',
  agents: 'Participants: registration, profiles, keys, balances, the ledger statement, transfers, credits, spends, deposits and withdrawals.',
  deletions: 'Large deletions (a workspace, a participant) run by a job in short batches: their progress.',
  'data-room': "The workspace's public, append-only log of acts: metric revisions, readings, decisions, settlements and voids with their reasons.",
  'track-record': "Each decided proposal against what its metrics then did, beside simple rules (persistence, the average change, always approve), by period, with the traders' calibration; only the decided branch is ever realised.",
  events: 'The event log (spec §6): read it in order, or stream it.',
  feedback: 'Reports from participants to the operator of the instance.',
  groups: 'Groups in a workspace: capabilities and per-metric permissions granted to their members.',
  guides: 'The guides, as Markdown.',
  health: 'Liveness and readiness (Postgres, the queues) without credentials, for load balancers and health checks.',
  help: 'The live catalog of every endpoint, for people.',
  hooks: 'Webhooks: subscriptions to event types, signed deliveries, retries and replay.',
  marketplace: 'Public workspaces to browse and join.',
  metrics: 'Metrics: definitions, formulas, readings and their history.',
  onboard: 'One-call onboarding: a participant, its key and its first workspace.',
  'openapi.json': 'This document.',
  predictions: 'Prediction markets (LMSR books): listings, trades, limit orders, positions and history.',
  proposals: "Proposals: their approved and declined branches' markets, comments and decisions.",
  'public-config': 'The instance settings a client needs before it has a key.',
  sources: "A workspace's information stores: texts, and read-only repository bridges (tree and files at a ref).",
  status: "The workspace's status summary: metrics, markets and trends.",
  telemetry: 'Agent telemetry (spec §6): heartbeats and decision traces agents push, silent agents, for admins.',
  updates: 'What changed since a moment, for polling clients.',
  waitlist: 'Joining the waitlist of an instance that is not open to everyone.',
  workspaces: 'Workspaces: creation, settings, membership and view links.',
};

function securityOf(rule: AuthRule, scope: string): Json[] {
  const scopes = scope === 'none' || scope === 'any' || scope === 'master key' ? [] : [scope];
  if (rule.label === 'platform admin') return [{ apiKey: [] }];
  if (rule.sessionOnly) return [{ session: [] }];
  const keyed = [{ agentKey: scopes }, { apiKey: scopes }, { session: [] }];
  if (rule.label === '-') return [{}];
  if (rule.label === 'optional') return [{}, ...keyed];
  if (rule.anonymousRead) return [{}, ...keyed, { viewLink: [] }];
  return keyed;
}

function parametersOf(schema: ZodType | undefined, where: 'path' | 'query', sink: SchemaSink): Json[] {
  if (!schema) return [];
  const js = sink.convert(schema, 'input');
  const props = (js.properties ?? {}) as Record<string, Json>;
  const required = new Set((js.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => {
    const { description, deprecated, ...rest } = s;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description ? { description } : {}),
      ...(deprecated ? { deprecated: true } : {}),
      schema: rest,
    };
  });
}

function operationOf(r: AnyRoute, sink: SchemaSink): Json {
  const req = requirementOf(r.auth);
  const success = successStatusOf(r);
  const responses: Record<string, Json> = {};
  responses[String(success)] = r.response
    ? { description: 'Success.', content: { [r.responseType ?? 'application/json']: { schema: sink.convert(r.response, 'output') } } }
    : { description: 'Done; no body.' };
  if (r.conditional) responses['304'] = { description: 'Not modified: the ETag sent in If-None-Match is still current; no body.' };
  if (r.dryRunResponse) {
    // A route whose real answer is a 200 too (a transfer) answers either body there.
    const dry = sink.convert(r.dryRunResponse, 'output');
    const schema = success === 200 && r.response ? { oneOf: [sink.convert(r.response, 'output'), dry] } : dry;
    responses['200'] = { description: success === 200 ? 'Success, or with dryRun: what it would do and cost; nothing written.' : 'Dry run: what it would do and cost; nothing written.', content: { 'application/json': { schema } } };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(r)) {
    const s = statusOf(r, code);
    byStatus.set(s, [...(byStatus.get(s) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = {
      description: codes.map((c) => `\`${c}\`${isRetryable(c) ? ' (retryable)' : ''}`).join(', '),
      ...(codes.some(isRetryable) ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } } } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  const workspaceScoped = (r.auth.capability || r.auth.workspaceOptional) && !r.auth.workspaceParam;
  return {
    operationId: operationIdOf(r),
    summary: shortSummary(r.summary),
    description: [r.summary, `Auth: ${r.auth.label} (${AUTH_LEGEND[r.auth.label]}) Capability: ${req.capability}. Scope: ${req.scope}.`]
      .filter(Boolean)
      .join('\n\n'),
    tags: [r.path.split('/')[1]],
    ...(r.deprecated ? { deprecated: true } : {}),
    'x-auth': { label: r.auth.label, capability: req.capability, scope: req.scope },
    'x-error-codes': errorCodesOf(r),
    security: securityOf(r.auth, req.scope),
    parameters: [
      ...parametersOf(r.params, 'path', sink),
      ...parametersOf(r.query, 'query', sink),
      ...(workspaceScoped ? [workspaceHeader] : []),
      ...(r.idempotent ? [idempotencyHeader] : []),
    ],
    ...(r.body ? { requestBody: { required: !r.body.safeParse(undefined).success, content: { 'application/json': { schema: sink.convert(r.body, 'input') } } } } : {}),
    responses,
  };
}

/** Where each character sits: 0 outside brackets, more inside { }, [ ] or ( ). */
function depths(text: string): number[] {
  let d = 0;
  return [...text].map((ch) => {
    if ('{[('.includes(ch)) return ++d;
    const at = d;
    if ('}])'.includes(ch)) d = Math.max(0, d - 1);
    return at;
  });
}

/**
 * The first sentence, or its first clause when the sentence is long; never cut inside a bracket
 * ("Spend credits { amount, type: ... }" shortens to "Spend credits", not "Spend credits { amount, type").
 */
export function shortSummary(text: string): string {
  const firstAtDepth0 = (s: string, hit: (ch: string, i: number) => boolean) => {
    const d = depths(s);
    for (let i = 0; i < s.length; i++) if (d[i] === 0 && hit(s[i], i)) return i;
    return s.length;
  };
  const t = text.trim();
  const sentence = t.slice(0, firstAtDepth0(t, (ch, i) => ch === '.' && (i + 1 === t.length || /\s/.test(t[i + 1])))).trim();
  if (sentence.length <= 100) return sentence;
  const clause = sentence.slice(0, firstAtDepth0(sentence, (ch) => ch === ':' || ch === ';')).trim();
  const fits = (x: string) => x.length >= 15 && x.length <= 100;
  if (fits(clause)) return clause;
  const open = depths(clause).findIndex((x) => x > 0);
  const beforeBracket = open > 0 ? clause.slice(0, open).trim().replace(/[,;:]$/, '') : '';
  if (clause.length > 100 && fits(beforeBracket)) return beforeBracket;
  // Otherwise the sentence up to a word break outside any bracket, within 97 characters.
  const d = depths(sentence);
  let cut = 0;
  for (let i = 1; i <= 97 && i < sentence.length; i++) if (sentence[i] === ' ' && d[i] === 0) cut = i;
  if (cut > 0 && (clause.length > 100 || cut > clause.length)) return `${sentence.slice(0, cut).replace(/[,;:]$/, '')}...`;
  return clause.length <= 100 ? clause : `${clause.slice(0, 97)}...`;
}

let cached: Json | null = null;

/** The document for the routes registered now (built once: routes register at import time). */
export function openApiDocument(): Json {
  if (cached) return cached;
  const sink = new SchemaSink();
  const paths: Record<string, Record<string, Json>> = {};
  for (const r of registeredRoutes()) {
    const p = openApiPath(r.path);
    paths[p] ??= {};
    paths[p][r.method.toLowerCase()] = operationOf(r, sink);
  }
  const tags = [...new Set(registeredRoutes().map((r) => r.path.split('/')[1]))]
    .sort()
    .map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `Operations under /${name}.` }));
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Metric-priced proposals API',
      version: '1.0.0',
      description:
        'Workspaces define metrics; participants trade LMSR books on their future values and on proposals\' approved and declined branches. Credits are whole-credit JSON numbers. GET /api/help is the same catalog for people; GET /api/guides holds the guides.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/api' }],
    tags,
    paths,
    components: { securitySchemes: SECURITY_SCHEMES, schemas: { Error: ERROR_SCHEMA, ...sink.components } },
  };
  return cached;
}

/** The document's response entry for a route and status (exact, else none): the contract check uses it. */
export function documentedResponse(method: string, path: string, status: number): { schema?: Json; documented: boolean } {
  const doc = openApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Json }> }> }>> };
  const op = doc.paths[openApiPath(path)]?.[method.toLowerCase()];
  const resp = op?.responses[String(status)];
  if (!resp) return { documented: false };
  const content = resp.content && Object.values(resp.content)[0];
  return { documented: true, schema: content?.schema };
}

import { z, type ZodType } from 'zod';
import { hasScope, scopeCapabilities, type AccountScope, type Capability } from '../../domain/capabilities';
import { ASK_TYPES, type AskType } from '../../domain/connections';
import { requirementOf } from '../auth';
import type { Method, RouteDef } from '../registry';
import { registeredRoutes } from '../registry';

/**
 * The connector's tools (spec §2.13): each is one route of the registry, grouped by ask type. Its
 * input schema is made from the route's own zod schemas (path parameters and query fields at the
 * top level, the JSON body under `body`, `workspace` for X-Workspace-Id), converted the way the
 * OpenAPI document converts them; a call is dispatched through that very route.
 */
interface ToolSpec {
  name: string;
  method: Method;
  path: string;
  ask: AskType;
  /** Replaces the route summary when the tool narrows the route (the quote is a dry-run trade). */
  description?: string;
  /** Fixed path parameters (`me` for the caller's own records). */
  fixedParams?: Record<string, string>;
  /** Body fields the tool always sends. */
  fixedBody?: Record<string, unknown>;
}

const SPECS: ToolSpec[] = [
  // look
  { name: 'whoami', method: 'GET', path: '/agents/me', ask: 'look' },
  { name: 'list_my_participants', method: 'GET', path: '/agents/mine', ask: 'look' },
  { name: 'list_public_workspaces', method: 'GET', path: '/marketplace/workspaces/public', ask: 'look' },
  { name: 'current_workspace', method: 'GET', path: '/workspaces/current', ask: 'look' },
  { name: 'status', method: 'GET', path: '/status', ask: 'look' },
  { name: 'list_metrics', method: 'GET', path: '/metrics', ask: 'look' },
  { name: 'get_metric', method: 'GET', path: '/metrics/:id', ask: 'look' },
  { name: 'list_markets', method: 'GET', path: '/predictions/markets', ask: 'look' },
  { name: 'get_market', method: 'GET', path: '/predictions/markets/:id', ask: 'look' },
  { name: 'market_history', method: 'GET', path: '/predictions/markets/:id/history', ask: 'look' },
  { name: 'orderbook', method: 'GET', path: '/predictions/markets/:id/orderbook', ask: 'look' },
  {
    name: 'quote',
    method: 'POST',
    path: '/predictions/trade',
    ask: 'look',
    fixedBody: { dryRun: true },
    description: 'Quote a trade without placing it (a dry run of POST /predictions/trade): the same body as trade; nothing is spent.',
  },
  { name: 'list_proposals', method: 'GET', path: '/proposals', ask: 'look' },
  { name: 'get_proposal', method: 'GET', path: '/proposals/:id', ask: 'look' },
  { name: 'proposal_comments', method: 'GET', path: '/proposals/:id/comments', ask: 'look' },
  { name: 'my_balance', method: 'GET', path: '/agents/:id/balance', ask: 'look', fixedParams: { id: 'me' } },
  { name: 'my_positions', method: 'GET', path: '/agents/:id/positions', ask: 'look', fixedParams: { id: 'me' } },
  { name: 'my_trades', method: 'GET', path: '/agents/:id/trades', ask: 'look', fixedParams: { id: 'me' } },
  { name: 'my_orders', method: 'GET', path: '/predictions/orders', ask: 'look' },
  { name: 'my_transfers', method: 'GET', path: '/agents/transfers', ask: 'look' },
  { name: 'list_groups', method: 'GET', path: '/groups', ask: 'look' },
  { name: 'data_room', method: 'GET', path: '/data-room/actions', ask: 'look' },
  { name: 'track_record', method: 'GET', path: '/track-record', ask: 'look' },
  { name: 'list_sources', method: 'GET', path: '/sources', ask: 'look' },
  { name: 'read_source_text', method: 'GET', path: '/sources/:id/text', ask: 'look' },
  { name: 'source_tree', method: 'GET', path: '/sources/:id/tree', ask: 'look' },
  { name: 'source_file', method: 'GET', path: '/sources/:id/file', ask: 'look' },
  // build
  { name: 'create_workspace', method: 'POST', path: '/workspaces', ask: 'build' },
  { name: 'join_workspace', method: 'POST', path: '/marketplace/:workspaceId/join', ask: 'build' },
  { name: 'create_metric', method: 'POST', path: '/metrics', ask: 'build' },
  { name: 'update_metric', method: 'PUT', path: '/metrics/:id', ask: 'build' },
  // trade
  { name: 'trade', method: 'POST', path: '/predictions/trade', ask: 'trade' },
  { name: 'place_order', method: 'POST', path: '/predictions/orders', ask: 'trade' },
  { name: 'cancel_order', method: 'DELETE', path: '/predictions/orders/:id', ask: 'trade' },
  // fund
  { name: 'credit_member', method: 'POST', path: '/agents/:id/credit', ask: 'fund' },
  // a book opened by hand is paid from the caller's balance
  { name: 'open_market', method: 'POST', path: '/predictions/markets', ask: 'fund' },
  // post
  { name: 'propose', method: 'POST', path: '/proposals', ask: 'post' },
  { name: 'comment', method: 'POST', path: '/proposals/:id/comments', ask: 'post' },
  { name: 'withdraw_proposal', method: 'POST', path: '/proposals/:id/withdraw', ask: 'post' },
  { name: 'send_feedback', method: 'POST', path: '/feedback', ask: 'post' },
  // decide
  { name: 'approve_proposal', method: 'POST', path: '/proposals/:id/approve', ask: 'decide' },
  { name: 'decline_proposal', method: 'POST', path: '/proposals/:id/decline', ask: 'decide' },
  { name: 'settle_metric', method: 'POST', path: '/metrics/:id/settle', ask: 'decide' },
  { name: 'void_market', method: 'POST', path: '/predictions/markets/:id/void', ask: 'decide' },
  // publish
  { name: 'update_workspace', method: 'PATCH', path: '/workspaces/:id', ask: 'publish' },
  { name: 'view_link', method: 'GET', path: '/workspaces/:id/view-link', ask: 'publish' },
  // remove
  { name: 'delete_metric', method: 'DELETE', path: '/metrics/:id', ask: 'remove' },
  { name: 'delete_group', method: 'DELETE', path: '/groups/:id', ask: 'remove' },
  { name: 'delete_workspace', method: 'DELETE', path: '/workspaces/:id', ask: 'remove' },
  { name: 'deletion_progress', method: 'GET', path: '/deletions/:id', ask: 'look' },
  // access
  { name: 'create_group', method: 'POST', path: '/groups', ask: 'access' },
  { name: 'update_group', method: 'PUT', path: '/groups/:id', ask: 'access' },
  { name: 'add_group_member', method: 'POST', path: '/groups/:id/members', ask: 'access' },
  { name: 'remove_group_member', method: 'DELETE', path: '/groups/:id/members/:agentId', ask: 'access' },
  // money
  { name: 'transfer', method: 'POST', path: '/agents/transfer', ask: 'money' },
  { name: 'withdraw', method: 'POST', path: '/agents/:id/withdraw', ask: 'money', fixedParams: { id: 'me' } },
];

type Json = Record<string, unknown>;

export interface Tool {
  name: string;
  ask: AskType;
  route: RouteDef<unknown, unknown, unknown>;
  title: string;
  description: string;
  inputSchema: Json & { type: 'object' };
  fixedParams: Record<string, string>;
  fixedBody?: Record<string, unknown>;
  paramNames: string[];
  queryNames: string[];
  /** The key scope the route needs (spec §5.5), as GET /help states it. */
  scope: string;
  annotations: Annotations;
  /** The success body's JSON Schema (the route's own response schema); `wrapped`: not an object, sent as { result }. */
  output?: { schema: Json & { type: 'object' }; wrapped: boolean };
}

/** MCP tool annotations (hints a host shows and plans by). */
export interface Annotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * Each tool's effect, in one table a test holds every tool against: reads change nothing; a write
 * that takes credits, shares or records away (or that cannot be taken back) is destructive; one whose
 * repeat changes nothing more is idempotent (money tools are, through their Idempotency-Key); only a
 * withdrawal reaches outside this service (the chain).
 */
const EFFECTS: Record<string, Partial<Annotations>> = {
  quote: { readOnlyHint: true, idempotentHint: true },
  create_workspace: {},
  join_workspace: { idempotentHint: true },
  create_metric: { destructiveHint: true, idempotentHint: true },
  update_metric: { idempotentHint: true },
  trade: { destructiveHint: true, idempotentHint: true },
  place_order: { destructiveHint: true, idempotentHint: true },
  cancel_order: { idempotentHint: true },
  credit_member: { destructiveHint: true, idempotentHint: true },
  open_market: { destructiveHint: true },
  propose: { destructiveHint: true, idempotentHint: true },
  comment: {},
  withdraw_proposal: { destructiveHint: true, idempotentHint: true },
  send_feedback: {},
  approve_proposal: { destructiveHint: true, idempotentHint: true },
  decline_proposal: { destructiveHint: true, idempotentHint: true },
  settle_metric: { destructiveHint: true },
  void_market: { destructiveHint: true, idempotentHint: true },
  update_workspace: { idempotentHint: true },
  view_link: { idempotentHint: true },
  delete_metric: { destructiveHint: true, idempotentHint: true },
  delete_group: { destructiveHint: true, idempotentHint: true },
  delete_workspace: { destructiveHint: true, idempotentHint: true },
  create_group: {},
  update_group: { idempotentHint: true },
  add_group_member: { idempotentHint: true },
  remove_group_member: { destructiveHint: true, idempotentHint: true },
  transfer: { destructiveHint: true, idempotentHint: true },
  withdraw: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
};

/** The annotations of a tool: GET routes read (and repeat freely); writes as EFFECTS says. */
export function annotationsOf(name: string, method: Method): Annotations {
  if (method === 'GET') return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false, ...EFFECTS[name] };
  return { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false, ...EFFECTS[name] };
}

/**
 * The key scope a tool needs: its route's (GET /help states it); a write whose route names none (an
 * identity is enough: create a workspace, join one) needs account:write, so a read-only grant reads only.
 */
function toolScope(route: RouteDef<unknown, unknown, unknown>, a: Annotations): string {
  const scope = requirementOf(route.auth).scope;
  return !a.readOnlyHint && (scope === 'any' || scope === 'none') ? 'account:write' : scope;
}

/** Whether key scopes cover a tool's required scope (the same rule the API applies to the key). */
export function scopeCovers(scopes: readonly string[], needed: string): boolean {
  if (needed === 'none' || needed === 'any') return true;
  if (needed.startsWith('account:')) return hasScope(scopes, needed as AccountScope);
  if (needed.startsWith('workspace:')) return scopeCapabilities(scopes).has(needed.slice('workspace:'.length) as Capability);
  return scopes.includes('*');
}

function convert(schema: ZodType): Json {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
}

/**
 * A tool's outputSchema from its route's response schema, in the draft the MCP SDK client validates
 * with (draft-07); a body that is not an object (a list) is described, and sent, as { result }.
 */
function outputOf(route: RouteDef<unknown, unknown, unknown>, spec: ToolSpec): Tool['output'] {
  const schema = spec.fixedBody?.dryRun ? (route.dryRunResponse ?? route.response) : route.response;
  if (!schema || route.responseType) return undefined;
  const js = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any', target: 'draft-7' }) as Json;
  delete js.$schema;
  if (js.type === 'object') return { schema: js as Json & { type: 'object' }, wrapped: false };
  // A named schema comes as a $ref to its definition: an object one is the root itself.
  const definitions = js.definitions as Record<string, Json> | undefined;
  const named = typeof js.$ref === 'string' ? definitions?.[js.$ref.replace('#/definitions/', '')] : undefined;
  if (named?.type === 'object') return { schema: { ...named, definitions } as unknown as Json & { type: 'object' }, wrapped: false };
  delete js.definitions;
  return { schema: { type: 'object', properties: { result: js }, required: ['result'], ...(definitions ? { definitions } : {}) }, wrapped: true };
}

/** Top-level object properties of a schema as JSON Schema (path and query shapes are objects). */
function objectParts(schema: ZodType | undefined, defs: Json): { props: Record<string, Json>; required: string[] } {
  if (!schema) return { props: {}, required: [] };
  const js = convert(schema);
  Object.assign(defs, (js.$defs as Json | undefined) ?? {});
  return { props: (js.properties ?? {}) as Record<string, Json>, required: (js.required ?? []) as string[] };
}

function buildTool(spec: ToolSpec): Tool {
  const route = registeredRoutes().find((r) => r.method === spec.method && r.path === spec.path);
  if (!route) throw new Error(`connector tool ${spec.name}: no route ${spec.method} ${spec.path}`);
  const defs: Json = {};
  const fixed = spec.fixedParams ?? {};
  const params = objectParts(route.params, defs);
  for (const k of Object.keys(fixed)) delete params.props[k];
  const query = objectParts(route.query, defs);
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  const workspaceScoped = !!(route.auth.capability || route.auth.workspaceOptional) && !route.auth.workspaceParam;
  if (workspaceScoped) properties.workspace = { type: 'string', description: 'The workspace (id or slug) to act in; default: the person\'s default workspace.' };
  for (const [k, v] of Object.entries(params.props)) properties[k] = v;
  required.push(...params.required.filter((k) => !(k in fixed)));
  for (const [k, v] of Object.entries(query.props)) if (!(k in properties)) properties[k] = v;
  if (route.body && spec.method !== 'GET') {
    const body = convert(route.body);
    Object.assign(defs, (body.$defs as Json | undefined) ?? {});
    delete body.$defs;
    delete body.$schema;
    properties.body = { ...body, description: 'The JSON body of the request.' };
    if (!route.body.safeParse(undefined).success && !route.body.safeParse({}).success) required.push('body');
  }
  if (route.idempotent && !spec.fixedBody?.dryRun) {
    properties.idempotencyKey = {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'Sent as Idempotency-Key: a retry with the same key is answered from the first outcome. Default: derived from this session and the JSON-RPC request id.',
    };
  }
  const inputSchema: Json & { type: 'object' } = { type: 'object', properties, ...(required.length ? { required } : {}), ...(Object.keys(defs).length ? { $defs: defs } : {}) };
  const rule = route.auth.label;
  return {
    name: spec.name,
    ask: spec.ask,
    route,
    title: spec.name.replace(/_/g, ' '),
    description: `[${spec.ask}] ${spec.description ?? route.summary} (${route.method} /api${route.path}; auth: ${rule})`,
    inputSchema,
    fixedParams: fixed,
    fixedBody: spec.fixedBody,
    paramNames: Object.keys(objectParts(route.params, {}).props),
    queryNames: Object.keys(query.props),
    scope: toolScope(route, annotationsOf(spec.name, spec.method)),
    annotations: annotationsOf(spec.name, spec.method),
    output: outputOf(route, spec),
  };
}

let cached: Tool[] | undefined;

/** Every connector tool, built once from the route registry. */
export function connectorTools(): Tool[] {
  cached ??= SPECS.map(buildTool);
  return cached;
}

export function toolNamed(name: string): Tool | undefined {
  return connectorTools().find((t) => t.name === name);
}

/** How many tools each ask type holds (the connect guide and the tests read it). */
export function toolsByAskType(): Record<AskType, string[]> {
  const out = Object.fromEntries(ASK_TYPES.map((t) => [t, [] as string[]])) as Record<AskType, string[]>;
  for (const t of connectorTools()) out[t.ask].push(t.name);
  return out;
}

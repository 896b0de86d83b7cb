import { z, type ZodType } from 'zod';
import { hasScope, scopeCapabilities, type AccountScope, type Capability } from '../../domain/capabilities';
import { ASK_TYPES, type AskType } from '../../domain/connections';
import { requirementOf } from '../auth';
import type { AnyRoute, Method } from '../registry';
import {
  deleteGroupsById,
  deleteGroupsByIdMembersByAgentId,
  deleteMetricsById,
  deletePredictionsOrdersById,
  deleteWorkspacesById,
  getAgentsByIdBalance,
  getAgentsByIdPositions,
  getAgentsByIdTrades,
  getAgentsMe,
  getAgentsMine,
  getAgentsTransfers,
  getDataRoomActions,
  getDeletionsById,
  getGroups,
  getMarketplaceWorkspacesPublic,
  getMetrics,
  getMetricsById,
  getPredictionsMarkets,
  getPredictionsMarketsById,
  getPredictionsMarketsByIdHistory,
  getPredictionsMarketsByIdOrderbook,
  getPredictionsOrders,
  getProposals,
  getProposalsById,
  getProposalsByIdComments,
  getSources,
  getSourcesByIdFile,
  getSourcesByIdText,
  getSourcesByIdTree,
  getStatus,
  getTrackRecord,
  getWorkspacesByIdViewLink,
  getWorkspacesCurrent,
  patchWorkspacesById,
  postAgentsByIdCredit,
  postAgentsByIdWithdraw,
  postAgentsTransfer,
  postFeedback,
  postGroups,
  postGroupsByIdMembers,
  postMarketplaceByWorkspaceIdJoin,
  postMetrics,
  postMetricsByIdSettle,
  postPredictionsMarkets,
  postPredictionsMarketsByIdVoid,
  postPredictionsOrders,
  postPredictionsTrade,
  postProposals,
  postProposalsByIdApprove,
  postProposalsByIdComments,
  postProposalsByIdDecline,
  postProposalsByIdWithdraw,
  postWorkspaces,
  putGroupsById,
  putMetricsById,
} from '../routes';

/**
 * The connector's tools (spec §2.13): each is one route of the registry, grouped by ask type. Its
 * input schema is made from the route's own zod schemas (path parameters and query fields at the
 * top level, the JSON body under `body`, `workspace` for X-Workspace-Id), converted the way the
 * OpenAPI document converts them; a call is dispatched through that very route.
 */
interface ToolSpec {
  name: string;
  /** The route of the table the tool calls. */
  route: AnyRoute;
  ask: AskType;
  /** Replaces the route summary when the tool narrows the route (the quote is a dry-run trade). */
  description?: string;
  /** Fixed path parameters (`me` for the caller's own records). */
  fixedParams?: Record<string, string>;
  /** Body fields the tool always sends. */
  fixedBody?: Record<string, unknown>;
  /**
   * The tool's effect beyond its method's default (a read changes nothing; a write is neither
   * destructive nor idempotent unless said): a write that takes credits, shares or records away (or
   * cannot be taken back) is destructive; one whose repeat changes nothing more is idempotent (money
   * tools are, through their Idempotency-Key); only a withdrawal reaches outside (the chain).
   */
  effects?: Partial<Annotations>;
  /** The tool can move credits (spend, stake, fund, subsidise, transfer, withdraw): it asks under `money`. */
  money?: true;
  /** Its request takes a dry run (body dryRun: true) that prices it exactly: the confirmation reads it. */
  dryRun?: true;
}

const SPECS: ToolSpec[] = [
  // look
  { name: 'whoami', route: getAgentsMe, ask: 'look' },
  { name: 'list_my_participants', route: getAgentsMine, ask: 'look' },
  { name: 'list_public_workspaces', route: getMarketplaceWorkspacesPublic, ask: 'look' },
  { name: 'current_workspace', route: getWorkspacesCurrent, ask: 'look' },
  { name: 'status', route: getStatus, ask: 'look' },
  { name: 'list_metrics', route: getMetrics, ask: 'look' },
  { name: 'get_metric', route: getMetricsById, ask: 'look' },
  { name: 'list_markets', route: getPredictionsMarkets, ask: 'look' },
  { name: 'get_market', route: getPredictionsMarketsById, ask: 'look' },
  { name: 'market_history', route: getPredictionsMarketsByIdHistory, ask: 'look' },
  { name: 'orderbook', route: getPredictionsMarketsByIdOrderbook, ask: 'look' },
  {
    name: 'quote',
    route: postPredictionsTrade,
    ask: 'look',
    fixedBody: { dryRun: true },
    description: 'Quote a trade without placing it (a dry run of POST /predictions/trade): the same body as trade; nothing is spent.',
    effects: { readOnlyHint: true, idempotentHint: true },
  },
  { name: 'list_proposals', route: getProposals, ask: 'look' },
  { name: 'get_proposal', route: getProposalsById, ask: 'look' },
  { name: 'proposal_comments', route: getProposalsByIdComments, ask: 'look' },
  { name: 'my_balance', route: getAgentsByIdBalance, ask: 'look', fixedParams: { id: 'me' } },
  { name: 'my_positions', route: getAgentsByIdPositions, ask: 'look', fixedParams: { id: 'me' } },
  { name: 'my_trades', route: getAgentsByIdTrades, ask: 'look', fixedParams: { id: 'me' } },
  { name: 'my_orders', route: getPredictionsOrders, ask: 'look' },
  { name: 'my_transfers', route: getAgentsTransfers, ask: 'look' },
  { name: 'list_groups', route: getGroups, ask: 'look' },
  { name: 'data_room', route: getDataRoomActions, ask: 'look' },
  { name: 'track_record', route: getTrackRecord, ask: 'look' },
  { name: 'list_sources', route: getSources, ask: 'look' },
  { name: 'read_source_text', route: getSourcesByIdText, ask: 'look' },
  { name: 'source_tree', route: getSourcesByIdTree, ask: 'look' },
  { name: 'source_file', route: getSourcesByIdFile, ask: 'look' },
  // build
  { name: 'create_workspace', route: postWorkspaces, ask: 'build' },
  { name: 'join_workspace', route: postMarketplaceByWorkspaceIdJoin, ask: 'build', effects: { idempotentHint: true } },
  { name: 'create_metric', route: postMetrics, ask: 'build', effects: { destructiveHint: true, idempotentHint: true }, money: true, dryRun: true },
  { name: 'update_metric', route: putMetricsById, ask: 'build', effects: { idempotentHint: true } },
  // trade
  { name: 'trade', route: postPredictionsTrade, ask: 'trade', effects: { destructiveHint: true, idempotentHint: true }, money: true, dryRun: true },
  { name: 'place_order', route: postPredictionsOrders, ask: 'trade', effects: { destructiveHint: true, idempotentHint: true }, money: true },
  { name: 'cancel_order', route: deletePredictionsOrdersById, ask: 'trade', effects: { idempotentHint: true } },
  // fund
  { name: 'credit_member', route: postAgentsByIdCredit, ask: 'fund', effects: { destructiveHint: true, idempotentHint: true }, money: true },
  // a book opened by hand is paid from the caller's balance
  { name: 'open_market', route: postPredictionsMarkets, ask: 'fund', effects: { destructiveHint: true }, money: true },
  // post
  { name: 'propose', route: postProposals, ask: 'post', effects: { destructiveHint: true, idempotentHint: true }, money: true, dryRun: true },
  { name: 'comment', route: postProposalsByIdComments, ask: 'post' },
  { name: 'withdraw_proposal', route: postProposalsByIdWithdraw, ask: 'post', effects: { destructiveHint: true, idempotentHint: true } },
  { name: 'send_feedback', route: postFeedback, ask: 'post' },
  // decide
  { name: 'approve_proposal', route: postProposalsByIdApprove, ask: 'decide', effects: { destructiveHint: true, idempotentHint: true } },
  { name: 'decline_proposal', route: postProposalsByIdDecline, ask: 'decide', effects: { destructiveHint: true, idempotentHint: true } },
  { name: 'settle_metric', route: postMetricsByIdSettle, ask: 'decide', effects: { destructiveHint: true } },
  { name: 'void_market', route: postPredictionsMarketsByIdVoid, ask: 'decide', effects: { destructiveHint: true, idempotentHint: true } },
  // publish
  { name: 'update_workspace', route: patchWorkspacesById, ask: 'publish', effects: { idempotentHint: true } },
  { name: 'view_link', route: getWorkspacesByIdViewLink, ask: 'publish', effects: { idempotentHint: true } },
  // remove
  { name: 'delete_metric', route: deleteMetricsById, ask: 'remove', effects: { destructiveHint: true, idempotentHint: true } },
  { name: 'delete_group', route: deleteGroupsById, ask: 'remove', effects: { destructiveHint: true, idempotentHint: true } },
  { name: 'delete_workspace', route: deleteWorkspacesById, ask: 'remove', effects: { destructiveHint: true, idempotentHint: true } },
  { name: 'deletion_progress', route: getDeletionsById, ask: 'look' },
  // access
  { name: 'create_group', route: postGroups, ask: 'access' },
  { name: 'update_group', route: putGroupsById, ask: 'access', effects: { idempotentHint: true } },
  { name: 'add_group_member', route: postGroupsByIdMembers, ask: 'access', effects: { idempotentHint: true } },
  { name: 'remove_group_member', route: deleteGroupsByIdMembersByAgentId, ask: 'access', effects: { destructiveHint: true, idempotentHint: true } },
  // money
  { name: 'transfer', route: postAgentsTransfer, ask: 'money', effects: { destructiveHint: true, idempotentHint: true }, money: true },
  { name: 'withdraw', route: postAgentsByIdWithdraw, ask: 'money', fixedParams: { id: 'me' }, effects: { destructiveHint: true, idempotentHint: true, openWorldHint: true }, money: true },
];

type Json = Record<string, unknown>;

export interface Tool {
  name: string;
  ask: AskType;
  route: AnyRoute;
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
  /** The tool can move credits: it asks under `money` (ToolSpec.money). */
  money: boolean;
  /** Its request takes a pricing dry run (ToolSpec.dryRun). */
  dryRun: boolean;
}

/** MCP tool annotations (hints a host shows and plans by). */
export interface Annotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** The annotations of a tool: GET routes read (and repeat freely); writes as the spec's effects say. */
function annotationsOf(spec: ToolSpec): Annotations {
  const method: Method = spec.route.method;
  if (method === 'GET') return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false, ...spec.effects };
  return { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false, ...spec.effects };
}

/**
 * The key scope a tool needs: its route's (GET /help states it); a write whose route names none (an
 * identity is enough: create a workspace, join one) needs account:write, so a read-only grant reads only.
 */
function toolScope(route: AnyRoute, a: Annotations): string {
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
function outputOf(route: AnyRoute, spec: ToolSpec): Tool['output'] {
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
  const route = spec.route;
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
  if (route.body && route.method !== 'GET') {
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
    scope: toolScope(route, annotationsOf(spec)),
    annotations: annotationsOf(spec),
    output: outputOf(route, spec),
    money: spec.money ?? false,
    dryRun: spec.dryRun ?? false,
  };
}

let cached: Tool[] | undefined;

/** Every connector tool, built once from the route registry. */
export function connectorTools(): Tool[] {
  cached ??= SPECS.map(buildTool);
  return cached;
}

/** The tools that can move credits: they ask under `money` (each spec says so beside its route). */
export function moneyTools(): ReadonlySet<string> {
  return new Set(connectorTools().filter((t) => t.money).map((t) => t.name));
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

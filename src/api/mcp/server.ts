import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ElicitResultSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import type { Deps } from '../../deps';
import type { Confirmation } from '../../domain/connections';
import { MCP_PATH } from '../../services/accounts';
import { ApiError } from '../../errors';
import { logger } from '../../logger';
import { oauthClientSummary, revokeClientGrants, verifyMcpToken } from '../../services/accounts';
import { touchKeyUsed } from '../../services/access';
import { connectionForGrant, logCall, type ActiveConnection } from '../../services/connections';
import { callRoute, inProcessContext, toApiError, type Acting, type RunOptions } from '../dispatch';
import type { AnyRoute } from '../registry';
import { confirmationText, type Read } from './confirm';
import { connectorTools, scopeCovers, toolNamed, type Tool } from './tools';

const SESSION_IDLE_MS = 30 * 60_000;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** The connection as the latest request authenticated it (ask switches are read from here). */
  conn: ActiveConnection;
  /** The client address of the latest request (an anonymous bucket is never used: the connection has a key). */
  ip: string;
  lastSeen: number;
}

/** The protected-resource metadata address of /mcp (RFC 9728), named in WWW-Authenticate. */
export function resourceMetadataUrl(deps: Deps): string {
  return `${deps.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/.well-known/oauth-protected-resource${MCP_PATH}`;
}

/** 401 with WWW-Authenticate naming the resource metadata (RFC 9728 §5.1), the error body as everywhere else. */
function unauthorized(ctx: Koa.Context, deps: Deps, invalid: boolean, sentence: string): never {
  ctx.set('WWW-Authenticate', `Bearer resource_metadata="${resourceMetadataUrl(deps)}"${invalid ? ', error="invalid_token"' : ''}`);
  throw new ApiError(invalid ? 'invalid_credentials' : 'authentication_required', sentence);
}

function bearerOf(ctx: Koa.Context): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  return m ? m[1] : null;
}

/** The request a tool call makes: its route with the path filled, the query, the body and the workspace. */
function requestOf(tool: Tool, args: Record<string, unknown>) {
  const path = tool.route.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => encodeURIComponent(String(tool.fixedParams[name] ?? args[name] ?? '')));
  const query: Record<string, string> = {};
  for (const k of tool.queryNames) {
    const v = args[k];
    if (v !== undefined && v !== null) query[k] = typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  let body: unknown = tool.route.method === 'GET' ? undefined : args.body;
  if (tool.fixedBody) body = { ...((body as Record<string, unknown> | undefined) ?? {}), ...tool.fixedBody };
  if (body === undefined && tool.route.body && tool.route.method !== 'GET') body = {};
  const named = typeof args.workspace === 'string' && args.workspace.trim() ? args.workspace.trim() : null;
  // Routes that name their workspace in the path (PATCH /workspaces/{id}) log that one.
  const param = tool.route.auth.workspaceParam;
  const workspace = named ?? (param && typeof args[param] === 'string' ? (args[param] as string) : null);
  const params: Record<string, string> = {};
  for (const k of tool.paramNames) {
    const v = tool.fixedParams[k] ?? args[k];
    if (v !== undefined && v !== null) params[k] = String(v);
  }
  return { method: tool.route.method, path, query, body, workspace, headerWorkspace: named, params };
}

/** What a tool's call got: the status the API would send and its body (the route's, or the refusal's code and sentence). */
export interface ToolAnswer {
  status: number;
  body: unknown;
}

/**
 * One call of a route as the connection, in process (callRoute): the same validation, authorization,
 * scopes, rate limit, presenters and refusals as a REST client holding the connection's key would get.
 */
async function actAs(
  deps: Deps,
  as: Acting,
  route: AnyRoute,
  req: { params: Record<string, string>; query: Record<string, unknown>; body: unknown; idempotencyKey?: string | null },
  opts: RunOptions,
): Promise<ToolAnswer> {
  try {
    const answer = await callRoute(deps, route, { as, params: req.params, query: req.query, body: req.body, koa: inProcessContext(as, { idempotencyKey: req.idempotencyKey }) }, opts);
    return { status: answer.status, body: answer.result };
  } catch (err) {
    const refusal = toApiError(err);
    if (refusal.status >= 500) logger.error({ err, route: `${route.method} ${route.path}` }, 'connector tool call failed');
    return { status: refusal.status, body: refusal.toBody() };
  }
}

const text = (s: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text: s }], ...(isError ? { isError: true } : {}) });

/** The Idempotency-Key a money tool sends: the host's, or one derived from the session and the JSON-RPC request id. */
function idempotencyKeyOf(tool: Tool, args: Record<string, unknown>, sessionId: string | undefined, requestId: string | number): string | null {
  if (!tool.route.idempotent || tool.fixedBody?.dryRun) return null;
  if (typeof args.idempotencyKey === 'string' && args.idempotencyKey.trim()) return `mcp:${args.idempotencyKey.trim().slice(0, 100)}`;
  return `mcp:${sessionId ?? 'none'}:${tool.name}:${String(requestId).slice(0, 100)}`;
}

function buildServer(deps: Deps, session: () => Session): Server {
  const server = new Server(
    { name: deps.config.INSTANCE_NAME, version: '1.0.0' },
    {
      capabilities: { tools: {} },
      instructions:
        'Acts as the person who connected you, within the scopes they granted. Tools are grouped by ask type (in brackets); the person is asked to confirm the types they chose, and every call that can move credits, before anything is sent. Most tools take `workspace` (an id or slug).',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const scopes = session().conn.scopes;
    return {
      tools: connectorTools()
        .filter((t) => scopeCovers(scopes, t.scope))
        .map((t) => ({
          name: t.name,
          title: t.title,
          description: t.description,
          inputSchema: t.inputSchema,
          ...(t.output ? { outputSchema: t.output.schema } : {}),
          annotations: { title: t.title, ...t.annotations },
        })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = toolNamed(req.params.name);
    if (!tool) return text(`No tool named ${req.params.name}; tools/list names them all.`, true);
    const s = session();
    const conn = s.conn;
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    const call = requestOf(tool, args);
    const record = (status: number, confirmation: Confirmation) =>
      logCall(deps, conn.id, { tool: tool.name, method: call.method, path: `/api${call.path}`, workspace: call.workspace, body: call.body ?? null, confirmation, status });
    if (!scopeCovers(conn.scopes, tool.scope)) {
      await record(0, 'not_asked');
      return text(`${tool.name} needs the ${tool.scope} scope, which this connection was not granted (it holds ${conn.scopes.join(', ')}): nothing was sent. Connect again and grant it on the consent page to use this tool.`, true);
    }
    const acting = (workspace: string | null): Acting => ({ caller: conn.principal, workspace, viewToken: null, ip: s.ip });
    // The confirmation's reads are the connector's own: they count nothing against the person's rate limit.
    const read: Read = async (route, params, workspace, body) => actAs(deps, acting(workspace), route, { params, query: {}, body }, { limit: false });
    // Money asks whatever its family's switch says, unless the person turned money off explicitly.
    const askType = conn.ask[tool.ask] ? tool.ask : tool.money && conn.ask.money ? 'money' : null;
    let confirmation: Confirmation = 'not_asked';
    if (askType) {
      if (!server.getClientCapabilities()?.elicitation) {
        await record(0, 'unsupported');
        return text(`This connection asks before ${askType} acts, and this client cannot ask (no elicitation support): nothing was sent. The person can turn asking off for ${askType} (PUT /api/connections/${conn.id}/ask).`, true);
      }
      // Only what can run is asked about: the request's own checks (scope, input, workspace, capability)
      // first, then its dry run; a refusal is the answer, as the request itself would get it.
      const checked = await actAs(deps, acting(call.headerWorkspace), tool.route, { params: call.params, query: call.query, body: call.body }, { limit: false, checkOnly: true });
      const asked = checked.status >= 400 ? { message: '', refusal: checked.body } : await confirmationText(conn.clientName || 'Your assistant', tool, askType, { path: call.path, body: call.body, workspace: call.headerWorkspace, params: call.params, self: conn.agentId }, read);
      if (asked.refusal) {
        await record(0, 'not_asked');
        return text(JSON.stringify(asked.refusal), true);
      }
      let answer: { action: string; content?: Record<string, unknown> };
      try {
        answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: asked.message,
              requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Go ahead', description: 'Send this request as you.' } }, required: ['confirm'] },
            },
          },
          ElicitResultSchema,
          { timeout: deps.config.MCP_CONFIRM_TIMEOUT_MS },
        );
      } catch (err) {
        const timedOut = err instanceof McpError && err.code === ErrorCode.RequestTimeout;
        await record(0, timedOut ? 'timed_out' : 'cancelled');
        return text(timedOut ? `The person did not answer the confirmation within ${Math.round(deps.config.MCP_CONFIRM_TIMEOUT_MS / 1000)} seconds: nothing was sent.` : 'The confirmation could not be shown or was dismissed: nothing was sent.', true);
      }
      if (answer.action !== 'accept' || answer.content?.confirm !== true) {
        confirmation = answer.action === 'cancel' ? 'cancelled' : 'declined';
        await record(0, confirmation);
        return text(`The person ${confirmation === 'cancelled' ? 'dismissed' : 'declined'} the confirmation: nothing was sent.`, true);
      }
      confirmation = 'accepted';
    }
    const key = idempotencyKeyOf(tool, args, s.transport.sessionId, extra.requestId);
    if (conn.principal.keyId) touchKeyUsed(deps, conn.principal.keyId);
    const answer = await actAs(deps, acting(call.headerWorkspace), tool.route, { params: call.params, query: call.query, body: call.body, idempotencyKey: key }, { limit: true });
    await record(answer.status, confirmation);
    const out = answer.body === undefined ? `${answer.status}` : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    // The same body as structured content, described by the tool's outputSchema (the route's schema).
    if (answer.status < 400 && tool.output && answer.body !== undefined && typeof answer.body !== 'string') {
      return { ...text(out), structuredContent: (tool.output.wrapped ? { result: answer.body } : answer.body) as Record<string, unknown> };
    }
    return text(out, answer.status >= 400);
  });
  return server;
}

/** Browser origins allowed at /mcp: this server's own and MCP_ALLOWED_ORIGINS. */
function allowedOrigins(deps: Deps): Set<string> {
  const own = new URL(deps.config.PUBLIC_BASE_URL).origin;
  return new Set([own, ...deps.config.MCP_ALLOWED_ORIGINS.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean)]);
}

/**
 * POST/GET/DELETE /mcp: the Streamable HTTP MCP server (spec §5.1). Every request authenticates
 * (Authorization: Bearer); a session (Mcp-Session-Id) belongs to the connection that opened it and
 * lives in this process's memory (several API processes need sticky sessions for /mcp).
 */
export function mcpMiddleware(deps: Deps): Koa.Middleware {
  const sessions = new Map<string, Session>();
  const sweep = setInterval(() => {
    const cutoff = Date.now() - SESSION_IDLE_MS;
    for (const s of sessions.values()) if (s.lastSeen < cutoff) void s.transport.close().catch(() => undefined);
  }, 60_000);
  sweep.unref();
  return async (ctx, next) => {
    if (ctx.path !== MCP_PATH) return next();
    // DNS rebinding and cross-site pages (MCP transport spec): a browser's Origin must be one we allow;
    // a host that sends none is not a browser.
    const origin = ctx.get('origin');
    if (origin && !allowedOrigins(deps).has(origin)) throw new ApiError('origin_not_allowed', `Requests to /mcp from the origin ${origin.slice(0, 200)} are not allowed; the operator lists browser origins in MCP_ALLOWED_ORIGINS.`);
    const token = bearerOf(ctx);
    if (!token) unauthorized(ctx, deps, false, 'The connector needs an OAuth access token: Authorization: Bearer <token> (see the resource metadata named in WWW-Authenticate).');
    // Signed by us, issued by us, for this resource (the audience), unexpired; then its connection.
    const claims = await verifyMcpToken(deps, token);
    if (!claims) unauthorized(ctx, deps, true, 'The access token is invalid, expired, or issued for another resource than this connector.');
    const conn = await connectionForGrant(deps, claims, () => oauthClientSummary(deps, claims.clientId), revokeClientGrants);
    if (!conn) unauthorized(ctx, deps, true, 'This connection was removed: the access token was issued before that. Connect the assistant again.');
    const sid = ctx.get('mcp-session-id');
    let session = sid ? sessions.get(sid) : undefined;
    if (sid && (!session || session.conn.id !== conn.id)) throw new ApiError('not_found', 'No such MCP session for this connection: initialize a new one.');
    if (session) {
      session.conn = conn;
      session.ip = ctx.ip;
      session.lastSeen = Date.now();
    } else {
      const holder: { s?: Session } = {};
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, holder.s!);
        },
      });
      const server = buildServer(deps, () => holder.s!);
      holder.s = { transport, server, conn, ip: ctx.ip, lastSeen: Date.now() };
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      transport.onerror = (err) => logger.warn({ err }, 'mcp transport error');
      await server.connect(transport);
      session = holder.s;
    }
    ctx.respond = false;
    await session.transport.handleRequest(ctx.req, ctx.res);
  };
}

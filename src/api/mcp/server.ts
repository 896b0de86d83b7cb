import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ElicitResultSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import type { Deps } from '../../deps';
import type { Confirmation } from '../../domain/connections';
import { MCP_PATH } from '../../services/accounts';
import { ApiError } from '../../errors';
import { logger } from '../../logger';
import { oauthClientSummary, verifyMcpToken } from '../../services/accounts';
import { connectionForGrant, logCall, type ActiveConnection } from '../../services/connections';
import { sendThroughApi, type Loopback } from './dispatch';
import { connectorTools, toolNamed, type Tool } from './tools';

const SESSION_IDLE_MS = 30 * 60_000;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** The connection as the latest request authenticated it (ask switches are read from here). */
  conn: ActiveConnection;
  at: Loopback;
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
  return { method: tool.route.method, path, query, body, workspace, headerWorkspace: named };
}

const text = (s: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text: s }], ...(isError ? { isError: true } : {}) });

function buildServer(deps: Deps, session: () => Session): Server {
  const server = new Server({ name: deps.config.INSTANCE_NAME, version: '1.0.0' }, { capabilities: { tools: {} }, instructions: 'Acts as the person who connected you. Tools are grouped by ask type (in brackets); the person is asked to confirm the types they chose before anything is sent. Most tools take `workspace` (an id or slug).' });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: connectorTools().map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { readOnlyHint: t.ask === 'look', destructiveHint: t.ask === 'remove', title: t.title },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = toolNamed(req.params.name);
    if (!tool) return text(`No tool named ${req.params.name}; tools/list names them all.`, true);
    const s = session();
    const conn = s.conn;
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    const call = requestOf(tool, args);
    const record = (status: number, confirmation: Confirmation) =>
      logCall(deps, conn.id, { tool: tool.name, method: call.method, path: `/api${call.path}`, workspace: call.workspace, body: call.body ?? null, confirmation, status });
    let confirmation: Confirmation = 'not_asked';
    if (conn.ask[tool.ask]) {
      if (!server.getClientCapabilities()?.elicitation) {
        await record(0, 'unsupported');
        return text(`This connection asks before ${tool.ask} acts, and this client cannot ask (no elicitation support): nothing was sent. The person can turn asking off for ${tool.ask} (PUT /api/connections/${conn.id}/ask).`, true);
      }
      const shown = call.body === undefined ? '' : ` with ${JSON.stringify(call.body).slice(0, 500)}`;
      const answer = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: `${conn.clientName || 'Your assistant'} wants to ${tool.title} (${tool.ask}): ${call.method} /api${call.path}${call.workspace ? ` in ${call.workspace}` : ''}${shown}. Go ahead?`,
            requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Go ahead', description: 'Send this request as you.' } }, required: ['confirm'] },
          },
        },
        ElicitResultSchema,
      );
      if (answer.action !== 'accept' || answer.content?.confirm !== true) {
        confirmation = answer.action === 'cancel' ? 'cancelled' : 'declined';
        await record(0, confirmation);
        return text(`The person ${confirmation === 'cancelled' ? 'dismissed' : 'declined'} the confirmation: nothing was sent.`, true);
      }
      confirmation = 'accepted';
    }
    const headers: Record<string, string> = { 'x-agent-key': conn.keyValue, 'x-connection-id': conn.id };
    if (call.headerWorkspace) headers['x-workspace-id'] = call.headerWorkspace;
    const answer = await sendThroughApi(s.at, { method: call.method, path: call.path, query: call.query, body: call.body, headers });
    await record(answer.status, confirmation);
    const out = answer.body === undefined ? `${answer.status}` : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    return text(out, answer.status >= 400);
  });
  return server;
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
    const token = bearerOf(ctx);
    if (!token) unauthorized(ctx, deps, false, 'The connector needs an OAuth access token: Authorization: Bearer <token> (see the resource metadata named in WWW-Authenticate).');
    // Signed by us, issued by us, for this resource (the audience), unexpired; then its connection.
    const claims = await verifyMcpToken(deps, token);
    if (!claims) unauthorized(ctx, deps, true, 'The access token is invalid, expired, or issued for another resource than this connector.');
    const conn = await connectionForGrant(deps, claims, () => oauthClientSummary(deps, claims.clientId));
    if (!conn) unauthorized(ctx, deps, true, 'This connection was removed: the access token was issued before that. Connect the assistant again.');
    const at: Loopback = { host: ctx.req.socket.localAddress ?? '127.0.0.1', port: ctx.req.socket.localPort ?? 0 };
    const sid = ctx.get('mcp-session-id');
    let session = sid ? sessions.get(sid) : undefined;
    if (sid && (!session || session.conn.id !== conn.id)) throw new ApiError('not_found', 'No such MCP session for this connection: initialize a new one.');
    if (session) {
      session.conn = conn;
      session.at = at;
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
      holder.s = { transport, server, conn, at, lastSeen: Date.now() };
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

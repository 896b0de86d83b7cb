import type { IncomingHttpHeaders } from 'node:http';
import {
  effectiveCapabilities,
  hasScope,
  metricTradable,
  scopeFor,
  type Capability,
  type PermissionGrant,
  type Principal,
} from '../domain/capabilities';
import type { Deps } from '../deps';
import { DomainError } from '../errors';
import { callerCache, grantsInWorkspace, readPolicy, touchKeyUsed, workspaceOfViewLink, type ReadPolicy } from '../services/access';
import { principalOfAccount } from '../services/accounts';
import { keyHolder } from '../services/identity';
import { deletionOfWorkspace } from '../services/deletions';
import { defaultWorkspaceOf, workspaceByIdOrSlug, type WorkspaceRow } from '../services/workspaces';
import { hasSessionCookie } from '../edge/sessionCookie';
import { sessions } from './sessions';
import type { AuthRule } from './auth';

export type Caller = Principal;

export interface WorkspaceAccess {
  workspace: WorkspaceRow;
  caps: Set<Capability>;
  /** The groups whose grants apply (the caller's own, plus the Public group where it applies). */
  grants: PermissionGrant[];
  anonymous: boolean;
  viewLink: boolean;
  isOwner: boolean;
  /** Per-metric read (spec §2.10): false hides the metric and its books from /metrics, /status, /predictions/markets. */
  metricReadable(metricId: string): boolean;
  /** Per-metric trade: trade capability, read on the metric, and no group entry setting trade false. */
  metricTradable(metricId: string): boolean;
  /** Refuses (not_authorized, naming the metric) unless metricTradable. */
  requireMetricTradable(metric: { metricId: string; metricName: string }): void;
  /** Whether some group narrows per-metric permissions (then a book must be read before it is traded). */
  narrowsMetrics: boolean;
  /** Per-source read (spec §2.14). */
  sourceReadable(sourceId: string): boolean;
  /** The one read rule (services/access policy) these fields come from, for the readers that filter rows by it. */
  policy: ReadPolicy;
}

/** A cached row handed out as its own object (a handler may change its copy). */
function copyRow<T extends object | null>(row: T): T {
  return row && Object.assign(Object.create(Object.getPrototypeOf(row)), row);
}

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

export async function resolveCaller(deps: Deps, h: IncomingHttpHeaders): Promise<Caller | null> {
  const agentKey = header(h, 'x-agent-key');
  const apiKey = header(h, 'x-api-key');
  const raw = agentKey ?? apiKey;
  if (raw === undefined) {
    // An OAuth access token of the MCP connector is not a credential here (spec §5.1, §7: 401).
    if (/^bearer\s/i.test(header(h, 'authorization') ?? '')) {
      throw new DomainError('invalid_credentials', 'An OAuth access token works only at /mcp (the MCP connector); the API takes X-Agent-Key, X-API-Key or a signed-in session.');
    }
    // A key, when sent, is the credential; otherwise the account system's session cookie (spec §5.1).
    return hasSessionCookie(h) ? sessionCaller(deps, h) : null;
  }
  const trimmed = raw.trim();
  const key = trimmed ? await callerCache(deps).get(`k:${trimmed}`, () => keyHolder(deps, trimmed)) : null;
  if (!key) throw new DomainError('invalid_credentials', 'The key sent is unknown or has been revoked.');
  touchKeyUsed(deps, key.keyId);
  return {
    agentId: key.agentId,
    keyId: key.keyId,
    scopes: key.isMaster ? null : key.scopes,
    isMaster: key.isMaster,
    keyWorkspaceId: key.workspaceId,
    keyLocked: key.workspaceLocked,
  };
}

/** The browser session behind the cookie, as the account's participant; 401 when it has ended. */
async function sessionCaller(deps: Deps, h: IncomingHttpHeaders): Promise<Caller> {
  const session = await sessions().sessionOf(deps, h);
  if (!session) throw new DomainError('invalid_credentials', 'Your session has ended or was signed out: sign in again (POST /api/auth/sign-in/email).');
  return principalOfAccount(deps, session);
}

export function requireScope(caller: Caller, rule: AuthRule): void {
  if (rule.scope && !hasScope(caller.scopes, rule.scope)) {
    throw new DomainError('scope_denied', `This key's scopes do not include ${rule.scope}.`, { requiredScopes: [rule.scope] });
  }
}

/** What a REST request names besides its credentials: X-Workspace-Id and X-View-Link. */
export function namedIn(h: IncomingHttpHeaders): { workspace: string | null; viewToken: string | null } {
  return { workspace: header(h, 'x-workspace-id') ?? null, viewToken: header(h, 'x-view-link') ?? null };
}

/**
 * Which workspace the request is about, and what the caller may do there (spec §5.2-§5.4): the
 * workspace named by the route's path parameter, else X-Workspace-Id, else the key's default, else
 * the caller's highest-priority membership; an anonymous caller with a view link lands on the
 * link's workspace.
 */
export async function resolveAccess(
  deps: Deps,
  caller: Caller | null,
  names: { workspace: string | null; viewToken: string | null },
  rule: AuthRule,
  pathWorkspace?: string,
): Promise<WorkspaceAccess | null> {
  const named = pathWorkspace ?? names.workspace?.trim();
  const viewToken = names.viewToken?.trim();
  let ws: WorkspaceRow | null = null;
  let viewLinkWs: string | null | undefined;
  if (named) {
    ws = await callerCache(deps).get(`w:${named}`, () => workspaceByIdOrSlug(deps, named), copyRow);
    if (!ws) {
      const deletion = await deletionOfWorkspace(deps, named);
      if (deletion) throw new DomainError('workspace_not_found', `Workspace "${named}" is being deleted; GET /api/deletions/${deletion} shows the progress.`, { deletionId: deletion });
      throw new DomainError('workspace_not_found', `No workspace "${named}" exists.`);
    }
  } else if (caller?.keyWorkspaceId) {
    ws = await workspaceByIdOrSlug(deps, caller.keyWorkspaceId);
  } else if (caller) {
    ws = await defaultWorkspaceOf(deps, caller.agentId);
  } else if (viewToken) {
    viewLinkWs = await workspaceOfViewLink(deps, viewToken);
    if (viewLinkWs) ws = await workspaceByIdOrSlug(deps, viewLinkWs);
  }
  if (!ws) {
    if (rule.workspaceOptional || !rule.capability) return null;
    if (!caller) throw new DomainError('authentication_required', 'Send X-Workspace-Id naming a public workspace, or send a key.');
    throw new DomainError('workspace_required', 'This endpoint is workspace-scoped: send X-Workspace-Id with a workspace id or slug.');
  }
  if (viewToken && viewLinkWs === undefined) viewLinkWs = await workspaceOfViewLink(deps, viewToken);
  return accessForWorkspace(deps, caller, ws, viewLinkWs === ws.id);
}

/** The caller's access to one given workspace; a workspace-locked key naming another one is refused 403. */
export async function accessForWorkspace(deps: Deps, caller: Caller | null, ws: WorkspaceRow, viewLink = false): Promise<WorkspaceAccess> {
  // A locked key whose workspace was deleted (workspace id now null) is locked to nothing.
  if (caller?.keyLocked && caller.keyWorkspaceId !== ws.id) {
    throw new DomainError('workspace_locked', 'This key is locked to another workspace.', { keyWorkspaceId: caller.keyWorkspaceId });
  }
  const grants = caller?.isMaster
    ? []
    : await callerCache(deps).get(`g:${ws.id}:${ws.public}:${caller?.agentId ?? ''}:${viewLink}`, () => grantsInWorkspace(deps, ws, caller?.agentId ?? null, viewLink), (g) => [...g]);
  const isOwner = !!caller && ws.ownerId === caller.agentId;
  const caps = effectiveCapabilities({
    anonymous: !caller,
    isMaster: !!caller?.isMaster,
    isOwner,
    isPublicWorkspace: ws.public,
    viewLink,
    groupCapabilities: grants.map((g) => [...g.capabilities]),
    scopes: caller ? caller.scopes : null,
  });
  // The same read rule the feed, the stream and webhooks apply (services/access policy).
  const policy = readPolicy(ws.id, grants, caps);
  return {
    workspace: ws,
    caps,
    grants,
    anonymous: !caller,
    viewLink,
    isOwner,
    metricReadable: policy.metric,
    metricTradable: (id) => metricTradable(grants, id, caps),
    requireMetricTradable: ({ metricId, metricName }) => {
      if (!metricTradable(grants, metricId, caps)) {
        throw new DomainError('not_authorized', `Your groups do not allow trading on ${metricName}.`, { requiredCapabilities: ['trade'] });
      }
    },
    narrowsMetrics: policy.narrowsMetrics,
    sourceReadable: policy.source,
    policy,
  };
}

/** 401/403 with the right code when the caller lacks `cap` in the workspace. */
export function requireCapability(caller: Caller | null, access: WorkspaceAccess, cap: Capability): void {
  if (access.caps.has(cap)) return;
  if (!caller) {
    if (cap === 'read') throw new DomainError('authentication_required', 'This workspace is not public: send a key.');
    throw new DomainError('identity_required', 'Acting in a workspace needs an identity: register or send a key.');
  }
  const granted = effectiveCapabilities({
    anonymous: false,
    isMaster: caller.isMaster,
    isOwner: access.isOwner,
    isPublicWorkspace: access.workspace.public,
    viewLink: access.viewLink,
    groupCapabilities: access.grants.map((g) => [...g.capabilities]),
    scopes: null,
  });
  if (granted.has(cap)) {
    throw new DomainError('scope_denied', `This key's scopes do not allow ${cap} here.`, { requiredScopes: [scopeFor(cap)] });
  }
  throw new DomainError('not_authorized', `You need the ${cap} capability in this workspace.`, { requiredCapabilities: [cap] });
}

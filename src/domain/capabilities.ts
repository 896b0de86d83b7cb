/** Who may do what (spec §5.4, §5.5): pure rules, no I/O. */
export const CAPABILITIES = ['read', 'trade', 'manage', 'manage_workspace'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const SCOPES = [
  'workspace:read',
  'workspace:trade',
  'workspace:manage',
  'account:read',
  'account:write',
  'account:wallet',
  'account:keys',
  'account:agents',
  'account:feedback',
  '*',
] as const;
export type Scope = (typeof SCOPES)[number];
export type AccountScope = Extract<Scope, `account:${string}`>;

const WORKSPACE_SCOPE_CAPS: Record<string, Capability[]> = {
  'workspace:read': ['read'],
  'workspace:trade': ['read', 'trade'],
  'workspace:manage': ['read', 'trade', 'manage'],
  '*': [...CAPABILITIES],
};

/** Capabilities a key's scopes allow in a workspace; null scopes mean the caller bypasses scopes. */
export function scopeCapabilities(scopes: readonly string[] | null): Set<Capability> {
  if (scopes === null) return new Set(CAPABILITIES);
  const out = new Set<Capability>();
  for (const s of scopes) for (const c of WORKSPACE_SCOPE_CAPS[s] ?? []) out.add(c);
  return out;
}

export function hasScope(scopes: readonly string[] | null, needed: AccountScope): boolean {
  return scopes === null || scopes.includes('*') || scopes.includes(needed);
}

/** The scope a capability is reached through, for error bodies and the help catalog. */
export function scopeFor(cap: Capability): Scope {
  return cap === 'read' ? 'workspace:read' : cap === 'trade' ? 'workspace:trade' : cap === 'manage' ? 'workspace:manage' : '*';
}

export interface CapabilityInput {
  anonymous: boolean;
  isMaster: boolean;
  isOwner: boolean;
  isPublicWorkspace: boolean;
  viewLink: boolean;
  groupCapabilities: readonly string[][];
  scopes: readonly string[] | null;
}

/**
 * Effective capabilities = (group-derived capabilities) ∩ (key scopes). The master key and the
 * workspace creator hold every capability; an anonymous caller reads a public workspace (or one
 * whose view link it holds) and never acts.
 */
export function effectiveCapabilities(i: CapabilityInput): Set<Capability> {
  if (i.anonymous) return i.isPublicWorkspace || i.viewLink ? new Set<Capability>(['read']) : new Set();
  if (i.isMaster) return new Set(CAPABILITIES);
  const granted = new Set<Capability>();
  if (i.isOwner) for (const c of CAPABILITIES) granted.add(c);
  for (const caps of i.groupCapabilities) for (const c of caps) if ((CAPABILITIES as readonly string[]).includes(c)) granted.add(c as Capability);
  if (i.isPublicWorkspace || i.viewLink) granted.add('read');
  const allowed = scopeCapabilities(i.scopes);
  return new Set([...granted].filter((c) => allowed.has(c)));
}

/** Scopes an agent-key caller may mint: never broader than its own. */
export function scopesWithin(own: readonly string[] | null, requested: readonly string[]): string[] {
  if (own === null || own.includes('*')) return [];
  const ownCaps = scopeCapabilities(own);
  return requested.filter((s) => {
    if (s === '*') return true;
    if (s.startsWith('workspace:')) return [...scopeCapabilities([s])].some((c) => !ownCaps.has(c));
    return !own.includes(s);
  });
}

/** Who is acting: the identity behind a request, as the API resolves it (spec §5.1). */
export interface Principal {
  agentId: string;
  keyId: string | null;
  /** null: the caller bypasses key scopes (master key, browser session). */
  scopes: string[] | null;
  isMaster: boolean;
  keyWorkspaceId: string | null;
  keyLocked: boolean;
  /** Present when the caller is a browser session: the account (spec §5.1) signed in. */
  accountId?: string;
}

export type MetricAction = 'read' | 'trade';

/** What one permission group grants (spec §2.10): capabilities plus optional per-metric and per-source narrowing. */
export interface PermissionGrant {
  capabilities: readonly string[];
  metricPermissions?: Readonly<Record<string, { read?: boolean; trade?: boolean }>>;
  sourcePermissions?: Readonly<Record<string, { read?: boolean }>>;
  /** The Public group applying to a caller not listed in it (a member, a public reader, a view link). */
  implicit?: boolean;
}

/**
 * Precedence of per-metric and per-source narrowing (spec §2.10, §2.14): the groups the caller was
 * put in decide; the Public group, which applies to every member implicitly, decides only for a
 * caller none of whose own groups carries the action. So a member whose only group hides a source
 * does not see it through the Public group, and among own groups one that allows it is enough.
 */
function decidingGrants(grants: readonly PermissionGrant[], action: MetricAction): readonly PermissionGrant[] {
  const carrying = grants.filter((g) => g.capabilities.includes(action));
  const own = carrying.filter((g) => !g.implicit);
  return own.length ? own : carrying;
}

/**
 * May a caller with effective capabilities `caps` (already intersected with its key scopes) read or
 * trade metric `metricId`, given its groups' `grants`? Per-metric permissions only narrow: a group
 * allows the action on a metric when its capabilities carry the action and its entry for the metric
 * does not set it to false; the caller is allowed when any group allows it (union). Holders of
 * manage (the owner, the master key, admins) and callers without groups see every metric. Trading a
 * metric also needs reading it.
 */
export function metricAllowed(grants: readonly PermissionGrant[], metricId: string, caps: ReadonlySet<Capability>, action: MetricAction): boolean {
  if (!caps.has(action)) return false;
  if (action === 'trade' && !metricAllowed(grants, metricId, caps, 'read')) return false;
  if (caps.has('manage') || grants.length === 0) return true;
  return decidingGrants(grants, action).some((g) => g.metricPermissions?.[metricId]?.[action] !== false);
}

/** Per-metric read: hide the metric and its books from GET /metrics, /status and /predictions/markets when false. */
export function metricReadable(grants: readonly PermissionGrant[], metricId: string, caps: ReadonlySet<Capability>): boolean {
  return metricAllowed(grants, metricId, caps, 'read');
}

export function metricTradable(grants: readonly PermissionGrant[], metricId: string, caps: ReadonlySet<Capability>): boolean {
  return metricAllowed(grants, metricId, caps, 'trade');
}

/** Whether any of the caller's groups narrows per-metric permissions (holders of manage see everything). */
export function narrowsMetrics(grants: readonly PermissionGrant[], caps: ReadonlySet<Capability>): boolean {
  return !caps.has('manage') && grants.some((g) => !!g.metricPermissions && Object.keys(g.metricPermissions).length > 0);
}

/** Per-source read, same narrowing rule as metrics. */
export function sourceReadable(grants: readonly PermissionGrant[], sourceId: string, caps: ReadonlySet<Capability>): boolean {
  if (!caps.has('read')) return false;
  if (caps.has('manage') || grants.length === 0) return true;
  return decidingGrants(grants, 'read').some((g) => g.sourcePermissions?.[sourceId]?.read !== false);
}

/**
 * Grant escalation: the capabilities a change would add or remove that the caller does not hold.
 * Nobody grants (or strips) a capability it lacks; manage_workspace therefore only moves by a holder.
 */
export function capabilityChangeNotHeld(held: ReadonlySet<Capability>, before: readonly string[], after: readonly string[]): string[] {
  const changed = new Set([...before.filter((c) => !after.includes(c)), ...after.filter((c) => !before.includes(c))]);
  return [...changed].filter((c) => !held.has(c as Capability));
}

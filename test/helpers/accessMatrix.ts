/**
 * The access matrix (spec §5), written out independently of the implementation: which answer a
 * caller gets from an endpoint, from the caller's credential kind, its group membership and its key's
 * scopes, against what the endpoint needs. Shared by access.test.ts (representative endpoints over
 * HTTP), access-visibility.test.ts and policies.test.ts (every registered route, by its policy rule).
 */

export type Cap = 'read' | 'trade' | 'manage' | 'manage_workspace';
export type Membership = 'outsider' | 'public' | 'trader' | 'admin' | 'owner-group' | 'owner';
export type ScopeSet = '*' | 'workspace:read' | 'workspace:trade' | 'workspace:manage' | 'account-only';

export const SCOPE_SETS: Record<ScopeSet, string[]> = {
  '*': ['*'],
  'workspace:read': ['workspace:read'],
  'workspace:trade': ['workspace:trade'],
  'workspace:manage': ['workspace:manage'],
  'account-only': ['account:read', 'account:keys'],
};
export const SCOPE_CAPS: Record<ScopeSet, Cap[]> = {
  '*': ['read', 'trade', 'manage', 'manage_workspace'],
  'workspace:read': ['read'],
  'workspace:trade': ['read', 'trade'],
  'workspace:manage': ['read', 'trade', 'manage'],
  'account-only': [],
};
export const GROUP_CAPS: Record<Membership, Cap[]> = {
  outsider: [],
  public: ['read'],
  trader: ['read', 'trade'],
  admin: ['read', 'trade', 'manage'],
  'owner-group': ['read', 'trade', 'manage', 'manage_workspace'], // a custom group the owner granted manage_workspace
  owner: ['read', 'trade', 'manage', 'manage_workspace'],
};

/** What an endpoint asks of its caller. The optional fields default to what access.test.ts's endpoints are. */
export interface MatrixEndpoint {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Workspace capabilities checked in order (PATCH settings: manage, then manage_workspace). */
  needs: Cap[];
  /** Account scope a key must carry (no workspace capability). */
  scope?: string;
  /** Anonymous callers may read (public-read). */
  publicRead?: boolean;
  /** An identity is needed before anything else (default: unless publicRead). */
  identity?: boolean;
  /** The endpoint resolves the named workspace (default: when it needs a capability), so a locked key naming another is refused. */
  resolvesWorkspace?: boolean;
  /** A browser session only. */
  sessionOnly?: boolean;
  /** The master key only. */
  platformOnly?: boolean;
}

/**
 * 'view-link' also stands for an anonymous caller on a public workspace: both read and nothing else.
 * 'session': a browser session, its participant of the given membership (sessions bypass key scopes).
 */
export interface Cred {
  kind: 'none' | 'view-link' | 'master' | 'locked-other' | 'key' | 'session';
  membership?: Membership;
  scopes?: ScopeSet;
}

/** '200' (allowed) or '<status> <code>'. */
export type Cell = string;

/** The rules of spec §5 (and §5.1 for sessions, §7 for acting without an identity). */
export function expected(e: MatrixEndpoint, cred: Cred): Cell {
  const anonymous = cred.kind === 'none' || cred.kind === 'view-link';
  const identity = e.identity ?? !e.publicRead;
  const write = e.method !== 'GET';
  if (anonymous) {
    if (!identity && (e.needs.length === 0 || (e.publicRead && cred.kind === 'view-link'))) return '200';
    // An act where the anonymous caller may read (a public workspace, a view link) lacks only an identity (spec §7).
    if (cred.kind === 'view-link' && e.needs.length > 0 && write) return '403 identity_required';
    return '401 authentication_required';
  }
  if (e.sessionOnly && cred.kind !== 'session') return '403 session_required';
  if (e.platformOnly && cred.kind !== 'master') return '403 not_authorized';
  if (cred.kind === 'master') return '200';
  const scopes = cred.kind === 'key' ? SCOPE_SETS[cred.scopes!] : ['*'];
  if (e.scope && !(scopes.includes('*') || scopes.includes(e.scope))) return '403 scope_denied';
  if (cred.kind === 'locked-other' && (e.resolvesWorkspace ?? e.needs.length > 0)) return '403 workspace_locked';
  if (cred.kind === 'locked-other') return '200';
  const scopeCaps = cred.kind === 'key' ? SCOPE_CAPS[cred.scopes!] : SCOPE_CAPS['*'];
  for (const cap of e.needs) {
    if (!GROUP_CAPS[cred.membership!].includes(cap)) return '403 not_authorized';
    if (!scopeCaps.includes(cap)) return '403 scope_denied';
  }
  return '200';
}

export function cellOf(res: { status: number; body: { code?: string } | undefined }): Cell {
  return res.status === 200 ? '200' : `${res.status} ${res.body?.code}`;
}

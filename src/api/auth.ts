import { scopeFor, type AccountScope, type Capability } from '../domain/capabilities';

/** Labels of the spec §5.4 catalog legend, shown in GET /help. */
export type AuthLabel =
  | '-'
  | 'public-read'
  | 'agent/admin'
  | 'agent'
  | 'admin'
  | 'workspace owner'
  | 'identity'
  | 'self/admin'
  | 'self/owner'
  | 'optional'
  | 'session'
  | 'platform admin';

export interface AuthRule {
  label: AuthLabel;
  /** Workspace capability the route needs (the route is then workspace-scoped). */
  capability?: Capability;
  /** Account scope a key must carry (master key and sessions bypass scopes). */
  scope?: AccountScope;
  /** Anonymous callers may read when the workspace is public or a view link is sent. */
  anonymousRead?: boolean;
  /** An identity is required even though no workspace capability is. */
  identity?: boolean;
  /** The route resolves a workspace when one is named, but does not require one. */
  workspaceOptional?: boolean;
  /** The workspace is named by this path parameter (e.g. /workspaces/{id}) instead of X-Workspace-Id. */
  workspaceParam?: string;
  /** Only a browser session may call it (spec §5.1): no key, not even the master key, and no scope grants it. */
  sessionOnly?: boolean;
}

export const auth = {
  none: (): AuthRule => ({ label: '-' }),
  optional: (): AuthRule => ({ label: 'optional', workspaceOptional: true }),
  publicRead: (): AuthRule => ({ label: 'public-read', capability: 'read', anonymousRead: true }),
  read: (): AuthRule => ({ label: 'agent/admin', capability: 'read', identity: true }),
  trade: (): AuthRule => ({ label: 'agent', capability: 'trade', identity: true }),
  manage: (): AuthRule => ({ label: 'admin', capability: 'manage', identity: true }),
  manageWorkspace: (): AuthRule => ({ label: 'workspace owner', capability: 'manage_workspace', identity: true }),
  identity: (scope?: AccountScope): AuthRule => ({ label: 'identity', identity: true, scope, workspaceOptional: true }),
  selfAdmin: (scope?: AccountScope): AuthRule => ({ label: 'self/admin', identity: true, scope, workspaceOptional: true }),
  selfOwner: (scope: AccountScope): AuthRule => ({ label: 'self/owner', identity: true, scope }),
  platform: (): AuthRule => ({ label: 'platform admin', identity: true }),
  session: (): AuthRule => ({ label: 'session', identity: true, sessionOnly: true }),
};

export const AUTH_LEGEND: Record<AuthLabel, string> = {
  '-': 'No authentication.',
  'public-read': 'No credentials needed when X-Workspace-Id names a public workspace (read only); otherwise read capability.',
  'agent/admin': 'An identity with read in the workspace.',
  agent: 'An identity with trade in the workspace.',
  admin: 'An identity with manage in the workspace.',
  'workspace owner': 'An identity with manage_workspace (the creator, or a group granted it by a holder).',
  identity: 'Any authenticated participant.',
  'self/admin': 'The caller may target itself; targeting another participant needs manage in the workspace.',
  'self/owner': 'The participant itself or its creator (a workspace admin is not enough).',
  optional: 'Credentials, if present, widen the response.',
  session: 'A browser session only: sign in at POST /api/auth/sign-in/email and send the session cookie. No key (not even the master key) and no key scope is accepted.',
  'platform admin': 'The master key (X-API-Key).',
};

/** What a label demands when the rule names no workspace capability (the check happens in the handler). */
const LABEL_CAPABILITY: Record<AuthLabel, string> = {
  '-': 'none',
  'public-read': 'read',
  'agent/admin': 'read',
  agent: 'trade',
  admin: 'manage',
  'workspace owner': 'manage_workspace',
  identity: 'identity',
  'self/admin': 'self, or manage to target another participant',
  'self/owner': 'self or creator',
  optional: 'none',
  session: 'session',
  'platform admin': 'platform',
};

/**
 * The explicit capability and scope requirement of a route, as GET /help shows it: every route
 * states both (spec §5.4, §5.5). 'none' means no credentials; 'any' means any key scope.
 */
export function requirementOf(rule: AuthRule): { capability: string; scope: string } {
  const capability = rule.capability ?? LABEL_CAPABILITY[rule.label];
  if (rule.scope) return { capability, scope: rule.scope };
  if (rule.capability) return { capability, scope: scopeFor(rule.capability) };
  if (rule.label === '-' || rule.label === 'optional') return { capability, scope: 'none' };
  if (rule.label === 'admin') return { capability, scope: 'workspace:manage' };
  if (rule.label === 'platform admin') return { capability, scope: 'master key' };
  if (rule.sessionOnly) return { capability, scope: 'session only' };
  return { capability, scope: 'any' };
}

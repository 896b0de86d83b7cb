import type { AccountScope, Capability } from '../../../domain/capabilities';

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

/**
 * What a route demands of its caller before its handler runs (runRoute checks it): data, not code,
 * so /help, OpenAPI and the policies test read the same rule the dispatcher applies.
 */
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
  /** Only the platform operator (the master key) may call it. */
  platformOnly?: boolean;
}

/** A rule shared by several routes: frozen, so no route can widen another's by editing its copy. */
const frozen = (r: AuthRule): AuthRule => Object.freeze(r);

/** The rule kinds of the legend; each policy file names its routes' rules with these. */
export const rules = {
  none: (): AuthRule => frozen({ label: '-' }),
  optional: (): AuthRule => frozen({ label: 'optional', workspaceOptional: true }),
  publicRead: (): AuthRule => frozen({ label: 'public-read', capability: 'read', anonymousRead: true }),
  read: (): AuthRule => frozen({ label: 'agent/admin', capability: 'read', identity: true }),
  trade: (): AuthRule => frozen({ label: 'agent', capability: 'trade', identity: true }),
  manage: (): AuthRule => frozen({ label: 'admin', capability: 'manage', identity: true }),
  manageWorkspace: (): AuthRule => frozen({ label: 'workspace owner', capability: 'manage_workspace', identity: true }),
  identity: (scope?: AccountScope): AuthRule => frozen({ label: 'identity', identity: true, scope, workspaceOptional: true }),
  selfAdmin: (scope?: AccountScope): AuthRule => frozen({ label: 'self/admin', identity: true, scope, workspaceOptional: true }),
  selfOwner: (scope: AccountScope): AuthRule => frozen({ label: 'self/owner', identity: true, scope }),
  platform: (): AuthRule => frozen({ label: 'platform admin', identity: true, platformOnly: true }),
  session: (): AuthRule => frozen({ label: 'session', identity: true, sessionOnly: true }),
  /** Any other shape a route needs (a workspace named by a path parameter, a label with no capability). */
  custom: (r: AuthRule): AuthRule => frozen({ ...r }),
};

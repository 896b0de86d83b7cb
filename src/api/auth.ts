import { scopeFor } from '../domain/capabilities';
import type { AuthLabel, AuthRule } from '../services/access';

// The rule type and its kinds live with the policies (services/access/policies): routes name a
// policy's rule; this file keeps what /help and OpenAPI say of a rule.
export type { AuthLabel, AuthRule } from '../services/access';

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
  if (rule.platformOnly) return { capability, scope: 'master key' };
  if (rule.sessionOnly) return { capability, scope: 'session only' };
  return { capability, scope: 'any' };
}

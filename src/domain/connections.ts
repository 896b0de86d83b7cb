/**
 * Ask types of a connection (spec §2.13): every connector tool belongs to one. When a type's `ask` is
 * on, the connector asks the person to confirm (MCP elicitation) before the request is sent. `look`
 * never asks and cannot be switched on.
 */
export const ASK_TYPES = ['look', 'build', 'trade', 'fund', 'post', 'decide', 'publish', 'remove', 'access', 'money'] as const;
export type AskType = (typeof ASK_TYPES)[number];
/** The types PUT /connections/{id}/ask may set (look is fixed off). */
export const SETTABLE_ASK_TYPES = ASK_TYPES.filter((t) => t !== 'look') as Exclude<AskType, 'look'>[];

/** What a new connection asks about: everything that moves credits, decides, publishes, removes or grants access. */
export const DEFAULT_ASK: Readonly<Record<AskType, boolean>> = {
  look: false,
  build: false,
  trade: true,
  fund: true,
  post: false,
  decide: true,
  publish: true,
  remove: true,
  access: true,
  money: true,
};

export const ASK_DESCRIPTIONS: Readonly<Record<AskType, string>> = {
  look: 'Read-only: workspaces, status, metrics, markets, quotes, proposals, your positions and history.',
  build: 'Create or change workspaces and metrics.',
  trade: 'Trade, place and cancel limit orders.',
  fund: 'Put credits into a workspace: credit a member from your balance.',
  post: 'Propose, comment, withdraw your proposal.',
  decide: 'Approve or decline proposals, settle a metric early.',
  publish: 'Change a workspace\'s visibility or settings, mint its view link.',
  remove: 'Delete metrics, groups or workspaces.',
  access: 'Permission groups and their members: who may do what in a workspace.',
  money: 'Transfer credits to another participant, withdraw; every other tool that can move credits (trade, order, metric, proposal, funding) asks under it too.',
};

/** The full ask map of a stored one (missing types take the default; look is always off). */
export function normalizeAsk(stored: Partial<Record<string, boolean>> | null | undefined): Record<AskType, boolean> {
  const out = { ...DEFAULT_ASK };
  for (const t of SETTABLE_ASK_TYPES) if (typeof stored?.[t] === 'boolean') out[t] = stored[t] as boolean;
  out.look = false;
  return out;
}

/** Confirmation outcomes recorded on a call row. */
export type Confirmation = 'not_asked' | 'accepted' | 'declined' | 'cancelled' | 'timed_out' | 'unsupported';

/** The OAuth scopes of the connector (issue 55), named as the key scopes they grant first. */
export const GRANT_SCOPES = ['workspace:read', 'workspace:trade', 'workspace:manage', 'account:wallet'] as const;
export type GrantScope = (typeof GRANT_SCOPES)[number];

/** What each grant means to a person, on the consent page. */
export const GRANT_DESCRIPTIONS: Readonly<Record<GrantScope, string>> = {
  'workspace:read': 'Read: workspaces, metrics, markets, quotes, proposals, your balance, positions and history.',
  'workspace:trade': 'Trade: trade and place orders, propose and comment (each credit it would spend is confirmed with you).',
  'workspace:manage': 'Manage: create metrics, approve or decline proposals, settle, void, edit groups.',
  'account:wallet': 'Money: transfer credits to another participant, withdraw.',
};

/**
 * The key scopes (spec §5.5) a connection's key carries for the OAuth scopes granted: reading your
 * own account always; every grant together is '*' (the workspace owner's acts need it). A grant of
 * none of them reads only.
 */
export function keyScopesForGrant(granted: readonly string[]): string[] {
  const g = new Set(granted.filter((s): s is GrantScope => (GRANT_SCOPES as readonly string[]).includes(s)));
  if (g.size === GRANT_SCOPES.length) return ['*'];
  const out = new Set<string>(['workspace:read', 'account:read']);
  if (g.has('workspace:trade')) for (const s of ['workspace:trade', 'account:feedback']) out.add(s);
  if (g.has('workspace:manage')) for (const s of ['workspace:manage', 'account:write']) out.add(s);
  if (g.has('account:wallet')) out.add('account:wallet');
  return [...out];
}

/** A call row's body: the JSON sent, trimmed to 4,000 characters (spec §2.13). */
export const CALL_BODY_LIMIT = 4000;
export function trimBody(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text.length > CALL_BODY_LIMIT ? text.slice(0, CALL_BODY_LIMIT) : text;
}

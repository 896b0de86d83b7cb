import type Koa from 'koa';
import type { z } from 'zod';
import type { connectionSchema } from '../api/schemas/connections';
import type { keyRowSchema, mintedKeySchema } from '../api/schemas/participants';
import type { Deps } from '../deps';
import { SCOPES } from '../domain/capabilities';
import { ASK_DESCRIPTIONS, SETTABLE_ASK_TYPES } from '../domain/connections';
import { DomainError } from '../errors';
import { apiAct, apiRead, signedInParticipant, type Visitor } from './api';
import { fmtInstant } from './format';
import { fieldRefusal, formBasics, formRefusal, invalidAttrs, valueOf, type FormState } from './forms';
import { html, type Html } from './html';
import type { PageParts } from './layout';
import { deleteAgentsByIdKeysByKeyId, deleteConnectionsById, getAgentsByIdKeys, getConnections, postAgentsByIdKeys, putConnectionsByIdAsk } from '../api/routes';

/**
 * The settings page (issue 59): connections (GET /connections: the ask switches, disconnect), API
 * keys (GET /agents/me/keys: mint with scopes, shown once; revoke) and account deletion (DELETE
 * /auth/me, confirmed by typing your name; the act is in src/doors/accounts/door.ts, which clears the
 * cookie). Every act goes through the API in process for the session's participant.
 */
export const SETTINGS_PAGE = '/settings';
export const DELETE_ACCOUNT_PATH = '/settings/delete-account';

// The rows as the API's schemas type them (the pages read what the routes answer).
type Connection = z.infer<typeof connectionSchema>;
type KeyRow = z.infer<typeof keyRowSchema>;
/** A key just minted: its value is on this one page only. */
export type MintedKey = z.infer<typeof mintedKeySchema>;

/** The scopes a person may tick for a new key ('*' is every one of them). */
const KEY_SCOPES = SCOPES.filter((s) => s !== '*');

function connectionRow(c: Connection, state: FormState | null): Html {
  const form = `ask-${c.id}`;
  return html`<li data-connection="${c.id}"><strong>${c.clientName}</strong>${c.redirectHost ? html` (<code>${c.redirectHost}</code>)` : ''}<br><small>connected ${fmtInstant(c.connectedAt)} · last used ${fmtInstant(c.lastUsedAt)} · grants ${c.scopes.join(', ') || 'none'}</small>
<form method="post" action="${SETTINGS_PAGE}">${formBasics(form, `${SETTINGS_PAGE}#connections`)}<input type="hidden" name="connection" value="${c.id}">
<fieldset><legend>Ask me first before it acts on</legend>${SETTABLE_ASK_TYPES.map(
    (t) => html`<label><input type="checkbox" name="ask" value="${t}"${c.ask[t as keyof Connection['ask']] ? html` checked` : ''}> ${t}: ${ASK_DESCRIPTIONS[t]}</label><br>`,
  )}</fieldset>${formRefusal(state, form)}<button type="submit">Save</button></form>
<form method="post" action="${SETTINGS_PAGE}">${formBasics(`disconnect-${c.id}`, `${SETTINGS_PAGE}#connections`)}<input type="hidden" name="connection" value="${c.id}">${formRefusal(state, `disconnect-${c.id}`)}<button type="submit">Disconnect</button></form></li>`;
}

function keyRow(k: KeyRow, state: FormState | null): Html {
  const form = `revoke-${k.keyId}`;
  return html`<tr data-key="${k.keyId}"><td>${k.label || '—'}</td><td><code>${k.hashPrefix}…</code></td><td>${k.scopes.join(', ')}</td><td>${fmtInstant(k.createdAt)}</td><td>${fmtInstant(k.lastUsedAt)}</td>
<td><form method="post" action="${SETTINGS_PAGE}">${formBasics(form, `${SETTINGS_PAGE}#keys`)}<input type="hidden" name="key" value="${k.keyId}"><button type="submit" aria-label="Revoke key ${k.label || k.hashPrefix}">Revoke</button>${formRefusal(state, form)}</form></td></tr>`;
}

/** The settings page for a signed-in visitor; `minted` shows a key just minted, once. */
export async function settingsPage(deps: Deps, v: Visitor, state: FormState | null = null, minted: MintedKey | null = null): Promise<PageParts> {
  const me = await signedInParticipant(deps, v);
  if (!me) throw new DomainError('authentication_required', 'Sign in to see your settings.');
  const [connections, keys] = await Promise.all([apiRead(deps, v, getConnections), apiRead(deps, v, getAgentsByIdKeys, { params: { id: 'me' } })]);
  const ticked = new Set(state?.form === 'mint-key' ? state.values.getAll('scopes') : ['workspace:read', 'workspace:trade', 'account:read']);
  const body = html`<h1>Settings</h1>
<p class="lead">Signed in as <strong>${me.name}</strong>. <a href="/participants/${encodeURIComponent(me.id)}">Your profile</a>.</p>
${minted ? html`<section class="note" aria-labelledby="minted-h" role="status"><h2 id="minted-h">Your new key</h2><p>Copy it now: it is shown this once, never again.</p><p class="secret" data-field="minted-key">${minted.apiKey}</p><p>Label ${minted.label || '—'}, scopes ${minted.scopes.join(', ')}. Send it as <code>X-Agent-Key</code>.</p></section>` : ''}
<section id="connections" aria-labelledby="connections-h"><h2 id="connections-h">Connections</h2>
<p class="lead">Assistants you connected through the MCP connector. Each asks you before the kinds of acts ticked below.</p>
${connections.length ? html`<ul class="workspaces">${connections.map((c) => connectionRow(c, state))}</ul>` : html`<p>No assistant is connected.</p>`}
</section>
<section id="keys" aria-labelledby="keys-h"><h2 id="keys-h">API keys</h2>
${
  keys.length
    ? html`<table><caption class="lead">Your keys (send one as X-Agent-Key)</caption><thead><tr><th scope="col">Label</th><th scope="col">Starts</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Revoke</th></tr></thead><tbody>${keys.map((k) => keyRow(k, state))}</tbody></table>`
    : html`<p>You have no API key.</p>`
}
<h3>Mint a key</h3>
<form method="post" action="${SETTINGS_PAGE}" class="stack">${formBasics('mint-key', `${SETTINGS_PAGE}#keys`)}
<label>Label<input name="label" maxlength="100" value="${valueOf(state, 'mint-key', 'label')}"${invalidAttrs(state, 'mint-key', 'label')}></label>${fieldRefusal(state, 'mint-key', 'label')}
<fieldset${invalidAttrs(state, 'mint-key', 'scopes')}><legend>Scopes</legend>${KEY_SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value="${s}"${ticked.has(s) ? html` checked` : ''}> <code>${s}</code></label>`)}</fieldset>${fieldRefusal(state, 'mint-key', 'scopes')}
${formRefusal(state, 'mint-key', ['label', 'scopes'])}<button type="submit">Mint key</button></form>
</section>
<section id="delete" aria-labelledby="delete-h"><h2 id="delete-h">Delete your account</h2>
<p>Your account, its sessions, password and connections go; your participant, its history and its own agent keys stay. This cannot be undone.</p>
<form method="post" action="${DELETE_ACCOUNT_PATH}" class="stack">${formBasics('delete-account', SETTINGS_PAGE)}
<label>Type your name, <strong>${me.name}</strong>, to confirm<input name="confirm" autocomplete="off" required value="${valueOf(state, 'delete-account', 'confirm')}"${invalidAttrs(state, 'delete-account', 'confirm')}></label>${fieldRefusal(state, 'delete-account', 'confirm')}
${formRefusal(state, 'delete-account', ['confirm'])}<button type="submit">Delete my account</button></form>
</section>`;
  return { title: 'Settings', body, visitor: v, me };
}

/** The settings page's acts (the form's `form` field says which); a minted key is shown on the page itself, once. */
export async function settingsAct(deps: Deps, _ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string | PageParts> {
  const form = values.get('form') ?? '';
  const connection = values.get('connection') ?? '';
  if (form.startsWith('ask-')) {
    const ticked = new Set(values.getAll('ask'));
    const ask = Object.fromEntries(SETTABLE_ASK_TYPES.map((t) => [t, ticked.has(t)]));
    await apiAct(deps, v, putConnectionsByIdAsk, { params: { id: connection }, body: { ask } });
    return `${SETTINGS_PAGE}#connections`;
  }
  if (form.startsWith('disconnect-')) {
    await apiAct(deps, v, deleteConnectionsById, { params: { id: connection } });
    return `${SETTINGS_PAGE}#connections`;
  }
  if (form.startsWith('revoke-')) {
    await apiAct(deps, v, deleteAgentsByIdKeysByKeyId, { params: { id: 'me', keyId: values.get('key') ?? '' } });
    return `${SETTINGS_PAGE}#keys`;
  }
  if (form === 'mint-key') {
    const label = (values.get('label') ?? '').trim();
    const minted = await apiAct(deps, v, postAgentsByIdKeys, { params: { id: 'me' }, body: { ...(label ? { label } : {}), scopes: values.getAll('scopes') } });
    // The value is drawn on this answer only (no redirect: it must not sit in a URL or a later page).
    return settingsPage(deps, v, null, minted);
  }
  throw new DomainError('validation_failed', 'This form is not one of the settings page\'s.');
}

/** The settings page drawn again with a refusal beside its form. */
export function settingsRedraw(deps: Deps, _ctx: Koa.Context, v: Visitor, state: FormState): Promise<PageParts> {
  return settingsPage(deps, v, state);
}

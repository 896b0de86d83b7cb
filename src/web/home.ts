import type { Deps } from '../deps';
import { apiRead, signedIn, type Visitor } from './api';
import { fmtCredits, fmtInstant } from './format';
import { html, type Html } from './html';
import { grantForm, grantOf } from './acts/credits';
import { doneNote } from './acts/common';
import type { FormState } from './forms';
import type { PageParts } from './layout';
import { getMarketplaceWorkspacesPublic, getWorkspaces } from '../api/routes';
import type { AnswerOf } from './api';

/**
 * The home page (issue 59): signed in, your workspaces first (GET /workspaces); then the public
 * workspaces, most active first as the API sorts them (GET /marketplace/workspaces/public); a search
 * by name (?q=, the API's own filter on the public list, the same words on yours).
 */
type PublicWorkspace = AnswerOf<typeof getMarketplaceWorkspacesPublic>[number];
type MyWorkspace = AnswerOf<typeof getWorkspaces>[number];

/** The longest search the page sends on (the API's bound). */
const MAX_Q = 120;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function publicRow(w: PublicWorkspace): Html {
  const a = w.activity;
  return html`<li data-workspace="${w.slug}"><a href="/w/${w.slug}"><strong>${w.name}</strong></a>${w.description ? html` <span class="lead">${w.description}</span>` : ''}
<br><small><span data-field="metrics" data-value="${String(a.metrics)}">${plural(a.metrics, 'metric')}</span> · <span data-field="open-proposals" data-value="${String(a.openProposals)}">${plural(a.openProposals, 'open proposal')}</span> · <span data-field="volume" data-value="${String(a.volume)}">${fmtCredits(a.volume)} traded</span>${a.lastTradeAt ? html` · last trade ${fmtInstant(a.lastTradeAt)}` : ''}</small></li>`;
}

function myRow(w: MyWorkspace): Html {
  return html`<li data-workspace="${w.slug}"><a href="/w/${w.slug}"><strong>${w.name}</strong></a> <span class="badge">${w.role}</span>${w.visibility === 'private' ? html` <span class="badge">private</span>` : ''}</li>`;
}

export async function homePage(deps: Deps, v: Visitor, rawQ: string | undefined, state?: FormState): Promise<PageParts> {
  const q = (rawQ ?? '').trim().slice(0, MAX_Q);
  const signed = await signedIn(deps, v);
  const [mine, grant] = signed ? await Promise.all([apiRead(deps, v, getWorkspaces), grantOf(deps, v)]) : [null, null];
  const listed = await apiRead(deps, v, getMarketplaceWorkspacesPublic, { query: q ? { q } : {} });
  const needle = q.toLowerCase();
  const yours = mine?.filter((w) => !needle || w.name.toLowerCase().includes(needle) || w.slug.includes(needle)) ?? null;
  // A public workspace of yours is listed once, among yours.
  const own = new Set((mine ?? []).map((w) => w.id));
  const others = listed.filter((w) => !own.has(w.id));
  const ownPublic = (yours ?? []).filter((w) => w.visibility === 'public').length;
  const noOthers = q ? html`No ${own.size ? 'other ' : ''}public workspace matches “${q}”.` : ownPublic ? 'No other public workspace yet: yours is listed above.' : 'No public workspace yet.';
  const body = html`<h1>Metric-priced proposals</h1>
<p class="lead">Workspaces price what proposals would do to their metrics with prediction markets. Find a public workspace below, or follow a view link you were given.</p>
${doneNote(state, 'grant', 'Done: your sign-up grant is in your balance. Spend it on any public workspace’s books below.')}${grant ? grantForm(grant, '/') : ''}
<form action="/" method="get" class="go" role="search"><label for="q">Search workspaces by name</label> <input id="q" name="q" type="search" maxlength="${String(MAX_Q)}" value="${q}" autocomplete="off"> <button type="submit">Search</button>${q ? html` <a href="/">Clear</a>` : ''}</form>
${
  yours
    ? html`<section id="yours" aria-labelledby="yours-h"><h2 id="yours-h">Your workspaces</h2><p><a href="/workspaces/new" id="new-workspace">New workspace</a> · <a href="/credits">Get credits</a></p>${
        yours.length ? html`<ul class="workspaces">${yours.map(myRow)}</ul>` : html`<p>${q ? 'None of yours matches.' : 'You belong to no workspace yet: join a public one below.'}</p>`
      }</section>`
    : html`<p><a href="/sign-in">Sign in</a> to see your own workspaces, private ones included, or <a href="/sign-up">sign up</a>.</p>`
}
<section id="public" aria-labelledby="public-h"><h2 id="public-h">Public workspaces</h2><p class="lead">Most active first: traded volume, then open proposals, then metrics.</p>${
    others.length ? html`<ul class="workspaces">${others.map(publicRow)}</ul>` : html`<p data-field="no-public">${noOthers}</p>`
  }</section>`;
  return { title: q ? `Workspaces matching “${q}”` : 'Metric-priced proposals', body, visitor: v };
}

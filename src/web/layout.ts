import { html, type Html } from './html';
import type { Me, Visitor } from './api';
import { fmtCredits } from './format';

/** A link inside the workspace's pages, carrying the view link along when the visitor came with one. */
export function href(v: Visitor | null, path: string): string {
  if (!v?.viewToken) return path;
  return `${path}${path.includes('?') ? '&' : '?'}view=${encodeURIComponent(v.viewToken)}`;
}

export interface PageParts {
  title: string;
  /** The workspace the page belongs to (its name and slug), for the navigation and the live stream. */
  workspace?: { slug: string; name: string } | null;
  visitor?: Visitor | null;
  body: Html;
  /** Pages with uPlot charts load it (about 50 KB); the others load only app.js. */
  charts?: boolean;
  /** Who is signed in (the header's name, balance and menu); null: no one; undefined: not looked up (no account links). */
  me?: Me | null;
  /** Seconds after which the page reloads itself (a deposit being watched until it confirms); no script needed. */
  refresh?: number;
}

/**
 * The header's account part: signed in, the name, the balance and a menu (a <details> disclosure:
 * no script needed), sign-out a POST form; signed out, sign-in (back to this page) and sign-up.
 */
function accountNav(me: Me | null | undefined, here: string): Html {
  if (me === undefined) return html``;
  if (!me) {
    // Back to this page after signing in (not to the account pages themselves).
    const next = here && here !== '/' && !/^\/(sign-in|sign-up|reset-password)\b/.test(here) ? `?next=${encodeURIComponent(here)}` : '';
    return html`<span class="account"><a href="/sign-in${next}">Sign in</a> <a href="/sign-up${next}">Sign up</a></span>`;
  }
  return html`<details class="account menu"><summary><span data-field="me-name">${me.name}</span> <span class="badge" data-field="me-balance" data-value="${String(me.balance)}">${fmtCredits(me.balance)}</span></summary>
<ul>
<li><a href="/participants/${encodeURIComponent(me.id)}">Profile</a></li>
<li><a href="/credits">Get credits</a></li>
<li><a href="/workspaces/new">New workspace</a></li>
<li><a href="/#yours">Your workspaces</a></li>
<li><a href="/settings#connections">Connections</a></li>
<li><a href="/settings#keys">API keys</a></li>
<li><a href="/settings">Settings</a></li>
<li><form method="post" action="/sign-out"><input type="hidden" name="back" value="/"><button type="submit" class="link">Sign out</button></form></li>
</ul></details>`;
}

export function layout(p: PageParts, here = ''): string {
  const ws = p.workspace;
  const v = p.visitor ?? null;
  const account = accountNav(p.me, here);
  const nav = ws
    ? html`<nav aria-label="Workspace"><a class="brand" href="${href(v, `/w/${ws.slug}`)}">${ws.name}</a><a href="${href(v, `/w/${ws.slug}`)}">Metrics</a><a href="${href(v, `/w/${ws.slug}/proposals`)}">Proposals</a><a href="/leaderboard">Leaderboard</a>${v?.viewToken ? html`<span class="badge">view link</span>` : ''}<a href="/">Home</a>${account}</nav>`
    : html`<nav aria-label="Site"><a class="brand" href="/">Metric-priced proposals</a><a href="/leaderboard">Leaderboard</a><a href="/api/reference">API</a>${account}</nav>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${p.refresh ? html`<meta http-equiv="refresh" content="${String(p.refresh)}">` : ''}
<title>${p.title}${ws ? ` · ${ws.name}` : ''}</title>
<link rel="stylesheet" href="/assets/app.css">
${p.charts ? html`<link rel="stylesheet" href="/assets/uPlot.min.css">` : ''}
</head>
<body${ws ? html` data-workspace="${ws.slug}"` : ''}${v?.viewToken ? html` data-view="${v.viewToken}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
<header>${nav}</header>
<main id="main" tabindex="-1">
${p.body}
</main>
<p id="live" class="live" role="status" aria-live="polite"></p>
<footer><a href="/api/reference">API reference</a> · every figure here is what GET /api answers for you</footer>
${p.charts ? html`<script src="/assets/uPlot.iife.min.js" defer></script>` : ''}
<script src="/assets/app.js" defer></script>
</body>
</html>
`.text;
}

import { html, type Html } from './html';
import type { Visitor } from './api';

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
}

export function layout(p: PageParts): string {
  const ws = p.workspace;
  const v = p.visitor ?? null;
  const nav = ws
    ? html`<nav aria-label="Workspace"><a class="brand" href="${href(v, `/w/${ws.slug}`)}">${ws.name}</a><a href="${href(v, `/w/${ws.slug}`)}">Metrics</a><a href="${href(v, `/w/${ws.slug}/proposals`)}">Proposals</a><a href="/leaderboard">Leaderboard</a>${v?.viewToken ? html`<span class="badge">view link</span>` : ''}</nav>`
    : html`<nav aria-label="Site"><a class="brand" href="/">Metric-priced proposals</a><a href="/leaderboard">Leaderboard</a><a href="/api/reference">API</a></nav>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
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

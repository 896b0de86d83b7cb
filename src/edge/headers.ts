import type Koa from 'koa';

/**
 * The one page-header helper of the front doors: what every answer carries, and what an HTML page
 * (the pages, the account pages, the OAuth pages) carries besides.
 */

/**
 * Headers on every answer (issue 57): no MIME sniffing of JSON or the reference; no Referer leaving
 * a page (pages carry view-link tokens in their URL).
 */
export async function securityHeaders(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  await next();
}

/**
 * Scripts only from this origin (the JSON blocks beside the charts are data, never run), no inline
 * script, no framing: what a workspace's text could smuggle in has nowhere to run.
 */
const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The OAuth pages' own: scripts and styles from this origin only, no framing. No form-action: the
 * consent form's answer redirects to the assistant's callback, which a browser would check against it.
 */
const OAUTH_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";

/** Which page: `page` (the web's layout, src/web and the account pages) or `oauth` (the OAuth sign-in and consent pages). */
export type PageKind = 'page' | 'oauth';

/**
 * An HTML page's headers: never cached (it names who is signed in, or carries a form's state), its
 * CSP, no sniffing; the OAuth pages add X-Frame-Options for hosts' browsers that predate frame-ancestors.
 */
export function pageHeaders(ctx: Koa.Context, kind: PageKind): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', kind === 'oauth' ? OAUTH_CSP : PAGE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (kind === 'oauth') ctx.set('X-Frame-Options', 'DENY');
}

/** A public document a cache may keep (`seconds`): the assets, the OAuth discovery documents. */
export function cacheFor(ctx: Koa.Context, seconds: number): void {
  ctx.set('Cache-Control', `public, max-age=${seconds}`);
}

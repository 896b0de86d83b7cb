import Router from '@koa/router';
import type Koa from 'koa';
import type { Deps } from '../deps';
import { ApiError, DomainError } from '../errors';
import { apiRead, signedIn, signedInParticipant, visitorOf, type Visitor } from './api';
import { localPath, refusalOf, SIGN_IN_PAGE, type FormState } from './forms';
import { handleForm, seeOther } from '../edge/forms';
import { cacheFor, pageHeaders } from '../edge/headers';
import { asset } from './assets';
import { html } from './html';
import { layout, type PageParts } from './layout';
import { marketPage, metricPage, proposalPage, proposalsPage, workspaceHome } from './pages';
import { leaderboardPage, profilePage } from './standings';
import { homePage } from './home';
import { trackRecordPage } from './trackRecord';
import { SETTINGS_PAGE, settingsAct, settingsPage, settingsRedraw } from './settings';
import { readScope } from '../readScope';
import { actRoutes } from './acts/routes';
import { doneOf, reviewOf } from './acts/common';
import { marketAct, REVIEWED_ON_BOOKS } from './acts/market';
import { getTrackRecordCsv } from '../api/routes';

/**
 * The web pages (server-rendered HTML) under /, beside the API under /api: workspace home,
 * metric, market, proposals by impact, proposal. Each page reads through the API in process for
 * the visitor (see api.ts), so a refusal there is a refusal here.
 */
const SLUG = /^[\w.-]{1,200}$/;

/** What a refused visitor reads: one sentence by the API's code, nothing of the workspace. */
const REFUSED: Partial<Record<string, string>> = {
  authentication_required: 'This workspace is private. Sign in as one of its members, or open it with a view link from its owner.',
  not_authorized: 'You may not see this.',
  workspace_locked: 'The key sent is locked to another workspace.',
  workspace_not_found: 'No such workspace.',
  not_found: 'Nothing here: it does not exist, or it is hidden from you.',
  market_not_found: 'No such book here: it does not exist, or it is hidden from you.',
};

function refusalPage(err: DomainError): { status: number; parts: PageParts } {
  const e = ApiError.from(err);
  const sentence = REFUSED[e.code] ?? e.message;
  const title = e.status === 404 ? 'Not found' : 'Not available';
  return {
    status: e.status,
    parts: { title, body: html`<h1>${title}</h1><p class="lead" data-code="${e.code}">${sentence}</p><p><a href="/">Home</a></p>` },
  };
}

function send(ctx: Koa.Context, status: number, parts: PageParts, started: number): void {
  sendPage(ctx, status, parts, started);
}

/**
 * A page in the web's layout with the web's headers (CSP, no-store, Server-Timing): the pages here
 * and the account pages of src/doors. The header names the signed-in person when `parts.me` is set.
 */
export function sendPage(ctx: Koa.Context, status: number, parts: PageParts, started = performance.now()): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  pageHeaders(ctx, 'page');
  // The render first (bench/pages.ts and the tests read its dur), then each API call the page made, in order.
  const calls = (ctx.state.webCalls ?? []) as NonNullable<Visitor['calls']>;
  ctx.set('Server-Timing', [`render;dur=${(performance.now() - started).toFixed(1)}`, ...calls.map((c, i) => `api${i};desc="${c.route}";dur=${c.ms.toFixed(1)}`)].join(', '));
  ctx.body = layout(parts, ctx.originalUrl);
}

type Render = (deps: Deps, ctx: Koa.Context) => Promise<PageParts>;

/** The page's parts with who is signed in, for the header (looked up once, only when the request carries a cookie). */
async function withMe(deps: Deps, ctx: Koa.Context, parts: PageParts): Promise<PageParts> {
  return parts.me !== undefined ? parts : { ...parts, me: await signedInParticipant(deps, visitorOf(ctx, null)) };
}

/**
 * A session cookie whose session ended (signed out in another tab, a password reset) makes the API
 * refuse every call (401): a page is then drawn as for a visitor with no session, once, and
 * ctx.state.sessionEnded tells the doors to clear the cookie. A key sent is never dropped.
 */
function dropEndedSession(ctx: Koa.Context, err: DomainError): boolean {
  const state = ctx.state as { sessionEnded?: boolean; webVisitor?: unknown };
  if (err.code !== 'invalid_credentials' || state.sessionEnded || !ctx.get('cookie') || ctx.get('x-agent-key') || ctx.get('x-api-key')) return false;
  delete ctx.request.headers.cookie;
  state.webVisitor = undefined;
  state.sessionEnded = true;
  return true;
}

function page(deps: Deps, render: Render) {
  const draw = async (ctx: Koa.Context): Promise<PageParts> => {
    try {
      // One read scope for the page: every API call it makes reads the same replica (or the primary).
      return await readScope(async () => withMe(deps, ctx, await render(deps, ctx)));
    } catch (err) {
      if (err instanceof DomainError && dropEndedSession(ctx, err)) return draw(ctx);
      throw err;
    }
  };
  return async (ctx: Koa.Context) => {
    const started = performance.now();
    try {
      send(ctx, 200, await draw(ctx), started);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const r = refusalPage(err);
      send(ctx, r.status, await withMe(deps, ctx, r.parts), started);
    }
  };
}

/**
 * A form's act: does it for the visitor (through apiAct) and says where the browser goes next; or,
 * for a dry run (a "Review" step), answers what to show: the page is drawn again with it (200); or
 * (rarely: a key shown once) gives the page to show as the answer itself.
 */
export type Act = (deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams) => Promise<string | { show: unknown; at?: string } | PageParts>;
/** The page a refused form is drawn on again, with the refusal beside its field. */
export type Redraw = (deps: Deps, ctx: Koa.Context, v: Visitor, state: FormState) => Promise<PageParts>;

/**
 * A page's form post, on the one skeleton (src/edge/forms.ts): refused when cross-site, read
 * (urlencoded, bounded), sent to sign-in and back when the visitor has no session or key, acted
 * through the API in process, then 303 to where the act says (the page again, usually). A refusal draws the form's page again with the API's sentence
 * beside the field it is about, with the API's status.
 */
export function formPost(deps: Deps, visitorFor: (ctx: Koa.Context) => Visitor, act: Act, redraw: Redraw): Koa.Middleware {
  // The visitor each request acted as, for the refusal's redraw (none when the refusal came first).
  const visitors = new WeakMap<Koa.Context, Visitor>();
  return handleForm({
    config: deps.config,
    act: async (ctx, values, started) => {
      const v = visitorFor(ctx);
      visitors.set(ctx, v);
      // No session, or one that ended: sign in, then back.
      const ended = (err: unknown) => {
        if (err instanceof DomainError && dropEndedSession(ctx, err)) return false;
        throw err;
      };
      if (!(await signedIn(deps, v).catch(ended))) {
        seeOther(ctx, `${SIGN_IN_PAGE}?next=${encodeURIComponent(localPath(values.get('back'), '/'))}`);
        return;
      }
      const next = await act(deps, ctx, v, values);
      if (typeof next !== 'string') {
        // A review (a dry run) is answered by a GET of the page with the reviewed values: Back to it
        // never asks to resend a form. Only a review too long for an address is answered here.
        const review = 'show' in next ? reviewAddress(values, next.at) : null;
        if (review) {
          seeOther(ctx, review);
          return;
        }
        if ('show' in next) {
          const shown: FormState = { form: values.get('form') ?? '', values, refusal: null, quote: next.show };
          send(ctx, 200, await withMe(deps, ctx, await readScope(() => redraw(deps, ctx, v, shown))), started);
        } else send(ctx, 200, await withMe(deps, ctx, next), started);
        return;
      }
      seeOther(ctx, localPath(next, '/'));
    },
    refused: async (ctx, err, values, started) => {
      if (!(err instanceof DomainError)) throw err;
      const refusal = refusalOf(err);
      const visitor = visitors.get(ctx);
      if (!values || !visitor) {
        const r = refusalPage(err);
        send(ctx, r.status, r.parts, started);
        return;
      }
      const state: FormState = { form: values.get('form') ?? '', values, refusal };
      try {
        send(ctx, refusal.status, await readScope(async () => withMe(deps, ctx, await redraw(deps, ctx, visitor, state))), started);
      } catch (again) {
        if (!(again instanceof DomainError)) throw again;
        const r = refusalPage(again);
        send(ctx, r.status, r.parts, started);
      }
    },
  });
}

/** The longest review address a form's review is redirected to (well inside a browser's and Node's limits). */
const REVIEW_ADDRESS_MAX = 6000;

/**
 * Where a reviewed form's values are shown by GET (`<back>?form=..&step=review&..`, read back by
 * reviewOf in acts/common.ts), or null when they would not fit an address (a long proposal's text).
 */
function reviewAddress(values: URLSearchParams, at?: string): string | null {
  const back = new URL(localPath(values.get('back'), '/'), 'http://page.invalid');
  const carried = new URLSearchParams();
  for (const [k, val] of values) if (k !== 'back') carried.append(k, val);
  carried.set('step', 'review');
  const view = back.searchParams.get('view');
  if (view) carried.set('view', view);
  const address = `${back.pathname}?${carried.toString()}${at ? `#${at}` : ''}`;
  return address.length <= REVIEW_ADDRESS_MAX ? address : null;
}

function workspaceParam(ctx: Koa.Context): string {
  const slug = String(ctx.params.ws ?? '');
  if (!SLUG.test(slug)) throw new DomainError('workspace_not_found', 'No such workspace.');
  return slug;
}

const pages: string[] = [];

/** The path patterns of every page (GET) the web door serves, once it is built: the readers' privacy test walks them all. */
export function pagePaths(): readonly string[] {
  return pages;
}

export function webRoutes(deps: Deps): Koa.Middleware {
  const router = new Router();
  actRoutes(router, deps, { page, formPost });
  router.get('/', page(deps, (d, ctx) => homePage(d, visitorOf(ctx, null), typeof ctx.query.q === 'string' ? ctx.query.q : undefined, doneOf(ctx))));
  router.get('/w', (ctx) => {
    const ws = typeof ctx.query.ws === 'string' && SLUG.test(ctx.query.ws) ? ctx.query.ws : null;
    ctx.redirect(ws ? `/w/${encodeURIComponent(ws)}` : '/');
  });
  router.get('/w/:ws', page(deps, (d, ctx) => workspaceHome(d, visitorOf(ctx, workspaceParam(ctx)), doneOf(ctx))));
  router.get('/w/:ws/metrics/:id', page(deps, (d, ctx) => metricPage(d, visitorOf(ctx, workspaceParam(ctx)), String(ctx.params.id), doneOf(ctx))));
  router.get('/w/:ws/markets/:id', page(deps, async (d, ctx) => {
    const v = visitorOf(ctx, workspaceParam(ctx));
    return marketPage(d, v, String(ctx.params.id), (await reviewOf(d, ctx, v, marketAct, REVIEWED_ON_BOOKS)) ?? doneOf(ctx));
  }));
  router.get('/w/:ws/proposals', page(deps, (d, ctx) => proposalsPage(d, visitorOf(ctx, workspaceParam(ctx)))));
  router.get('/w/:ws/proposals/:id', page(deps, (d, ctx) => proposalPage(d, visitorOf(ctx, workspaceParam(ctx)), String(ctx.params.id), doneOf(ctx))));
  const q = (ctx: Koa.Context, name: string) => (typeof ctx.query[name] === 'string' ? (ctx.query[name] as string) : undefined);
  router.get('/w/:ws/track-record', page(deps, (d, ctx) => trackRecordPage(d, visitorOf(ctx, workspaceParam(ctx)), { metric: q(ctx, 'metric'), cursor: q(ctx, 'cursor'), asOf: q(ctx, 'asOf') })));
  router.get('/w/:ws/track-record.csv', async (ctx) => {
    // The API's CSV for this visitor, as a download (a link cannot send the X-Workspace-Id the API route reads).
    const metric = q(ctx, 'metric');
    try {
      const text = await readScope(() => apiRead(deps, visitorOf(ctx, workspaceParam(ctx)), getTrackRecordCsv, { query: metric ? { metricId: metric } : {} }));
      ctx.type = 'text/csv; charset=utf-8';
      ctx.set('Content-Disposition', `attachment; filename="track-record-${workspaceParam(ctx)}.csv"`);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = text;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const r = refusalPage(err);
      send(ctx, r.status, await withMe(deps, ctx, r.parts), performance.now());
    }
  });
  router.get('/leaderboard', page(deps, (d, ctx) => leaderboardPage(d, visitorOf(ctx, null), { sort: q(ctx, 'sort'), min: q(ctx, 'min'), season: q(ctx, 'season'), ws: q(ctx, 'ws'), offset: q(ctx, 'offset'), limit: q(ctx, 'limit') })));
  router.get('/participants/:id', page(deps, (d, ctx) => profilePage(d, visitorOf(ctx, null), String(ctx.params.id))));
  router.get(SETTINGS_PAGE, async (ctx, next) => {
    // Without a session the settings page is the sign-in page's business (and back here after).
    if (!(await signedIn(deps, visitorOf(ctx, null)).catch(() => false))) {
      ctx.redirect(`${SIGN_IN_PAGE}?next=${encodeURIComponent(SETTINGS_PAGE)}`);
      return;
    }
    await next();
  }, page(deps, (d, ctx) => settingsPage(d, visitorOf(ctx, null))));
  router.post(SETTINGS_PAGE, formPost(deps, (ctx) => visitorOf(ctx, null), settingsAct, settingsRedraw));
  router.get('/assets/:name', async (ctx) => {
    const file = await asset(String(ctx.params.name));
    if (!file) return;
    cacheFor(ctx, 3600);
    ctx.type = file.type;
    ctx.body = file.body;
  });
  pages.splice(0, pages.length, ...router.stack.filter((l) => l.methods.includes('GET')).map((l) => String(l.path)));
  const routes = router.routes() as Koa.Middleware;
  return async (ctx, next) => routes(ctx as never, () => notFoundPage(deps, ctx, next));
}

/** Paths that are not pages: the API, the connector, the discovery documents, the OAuth pages and the assets keep their own answers. */
const NOT_PAGES = /^\/(api|mcp|\.well-known|assets|oauth)(\/|$)/;

/**
 * An unknown page address asked for by a browser (GET, Accept naming text/html, outside the API and
 * the other doors) gets an HTML 404 in the layout; anything else goes on (the API's JSON 404).
 */
async function notFoundPage(deps: Deps, ctx: Koa.Context, next: Koa.Next): Promise<void> {
  if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || NOT_PAGES.test(ctx.path) || !ctx.get('accept').includes('text/html')) return next();
  const parts: PageParts = {
    title: 'Page not found',
    body: html`<h1>Page not found</h1><p class="lead" data-code="page_not_found">There is no page at this address. Check it for a typo, or start from the home page.</p><p><a href="/">Home</a> · <a href="/leaderboard">Leaderboard</a></p>`,
  };
  sendPage(ctx, 404, await readScope(() => withMe(deps, ctx, parts)));
}

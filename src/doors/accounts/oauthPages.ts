import type Koa from 'koa';
import type { Deps } from '../../deps';
import {
  authServerMetadata,
  AUTH_BASE_PATH,
  MCP_PATH,
  OAUTH_CONSENT_PAGE,
  OAUTH_LOGIN_PAGE,
  oauthClientSummary,
  protectedResourceMetadata,
} from '../../services/accounts';
import { sessionOf } from './session';
import { answerConsent, signInForAuthorization, type FlowStep } from './authFlow';
import { GRANT_DESCRIPTIONS, GRANT_SCOPES, type GrantScope } from '../../domain/connections';
import { brakeSignIn } from './guard';
import { escapeHtml, Html } from '../../web/html';
import { layout } from '../../web/layout';
import { SIGN_UP_PAGE } from './pages';
import { handleForm } from '../../edge/forms';
import { cacheFor, pageHeaders } from '../../edge/headers';

/**
 * The OAuth side of the connector (spec §5.1): the discovery documents, and the two server-rendered
 * pages of the authorization flow (sign-in, consent). Forms post back here; the account system does
 * the work and says where the browser goes next.
 */
const AS_METADATA_PATHS = new Set([`/.well-known/oauth-authorization-server${AUTH_BASE_PATH}`, '/.well-known/oauth-authorization-server']);
const RESOURCE_METADATA_PATHS = new Set([`/.well-known/oauth-protected-resource${MCP_PATH}`, '/.well-known/oauth-protected-resource']);

const esc = escapeHtml;

/** An OAuth page in the web's layout; its body is built here from text escaped with the web's escaper. */
function page(title: string, body: string): string {
  return layout({ title, body: new Html(body) });
}

/** The pages' forms go through the one form-post skeleton (src/edge/forms.ts): same cross-site rule, same bounded reader. */
const CROSS_SITE = 'This form only accepts posts from this service\'s own pages: nothing was done. Start again from your assistant.';

/** The scopes the person left ticked, within what was asked; what is not a grant (offline_access) stays as asked. */
function narrowedScope(asked: string[], form: URLSearchParams): string {
  const ticked = new Set(form.getAll('grant'));
  return asked.filter((s) => !(GRANT_SCOPES as readonly string[]).includes(s) || ticked.has(s)).join(' ');
}

/** The signed authorization query the page was opened with (kept whole: the account system checks its signature). */
const queryOf = (ctx: Koa.Context) => ctx.querystring;

function follow(ctx: Koa.Context, step: FlowStep): boolean {
  for (const c of step.setCookies) ctx.append('Set-Cookie', c);
  if (!step.redirect) return false;
  ctx.redirect(step.redirect);
  return true;
}

/** One box per grant the host asked for, ticked; a person unticks what the assistant should not do. */
function grantBoxes(asked: string[]): string {
  const grants = GRANT_SCOPES.filter((g) => asked.includes(g));
  if (!grants.length) return '<p>It asked for no grant: it may only read.</p>';
  return grants.map((g: GrantScope) => `<label><input type="checkbox" name="grant" value="${g}" checked> ${esc(GRANT_DESCRIPTIONS[g])} <code>${g}</code></label>`).join('\n');
}

/**
 * The authorization request again, unsigned: the web's sign-up and sign-in pages send the browser
 * there once the person has an account and a session, and the account system goes on to consent.
 */
function authorizeAgain(query: string): string {
  const params = new URLSearchParams(query);
  params.delete('sig');
  params.delete('exp');
  return `${AUTH_BASE_PATH}/oauth2/authorize?${params.toString()}`;
}

function signInPage(query: string, error?: string): string {
  const signUp = `${SIGN_UP_PAGE}?next=${encodeURIComponent(authorizeAgain(query))}`;
  return page(
    'Sign in',
    `<h1>Sign in</h1><p>An assistant asks to connect to your account. Sign in to continue.</p>${error ? `<p class="err">${esc(error)}</p>` : ''}
<p>No account yet? <a href="${esc(signUp)}">Create one</a>, then sign in: you come back here to connect the assistant.</p>
<form method="post" action="${OAUTH_LOGIN_PAGE}"><input type="hidden" name="oauth_query" value="${esc(query)}">
<label>Email <input name="email" type="email" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>`,
  );
}

export function oauthPages(deps: Deps): Koa.Middleware {
  const signInPost = handleForm({
    config: deps.config,
    crossSite: CROSS_SITE,
    act: async (ctx, form) => {
      const query = form.get('oauth_query') ?? '';
      await brakeSignIn(deps, ctx, (form.get('email') ?? '').trim().toLowerCase());
      const step = await signInForAuthorization(deps, ctx, { email: form.get('email') ?? '', password: form.get('password') ?? '', oauthQuery: query });
      if (!step.error && follow(ctx, step)) return;
      ctx.status = step.error ? 401 : 400;
      ctx.type = 'html';
      ctx.body = signInPage(query, step.error ?? 'The authorization request could not continue; start again from your assistant.');
    },
  });
  const consentPost = handleForm({
    config: deps.config,
    crossSite: CROSS_SITE,
    act: async (ctx, form) => {
      const session = await sessionOf(deps, ctx.headers).catch(() => null);
      if (!session) {
        ctx.status = 401;
        ctx.type = 'html';
        ctx.body = signInPage(form.get('oauth_query') ?? '', 'Your session ended: sign in again.');
        return;
      }
      const oauthQuery = form.get('oauth_query') ?? '';
      const asked = (new URLSearchParams(oauthQuery).get('scope') ?? '').split(' ').filter(Boolean);
      const step = await answerConsent(deps, ctx, { accept: form.get('accept') === 'yes', oauthQuery, scope: asked.length ? narrowedScope(asked, form) : undefined });
      if (!step.error && follow(ctx, step)) return;
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = page('Connect an assistant', `<h1>That did not work</h1><p class="err">${esc(step.error ?? 'The authorization request could not continue.')}</p><p>Start again from your assistant.</p>`);
    },
  });
  return async (ctx, next) => {
    if (ctx.method === 'GET' && AS_METADATA_PATHS.has(ctx.path)) {
      ctx.body = await authServerMetadata(deps);
      cacheFor(ctx, 300);
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.state.rawAnswer = true;
      return;
    }
    if (ctx.method === 'GET' && RESOURCE_METADATA_PATHS.has(ctx.path)) {
      ctx.body = protectedResourceMetadata(deps);
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.state.rawAnswer = true;
      return;
    }
    if (ctx.path === OAUTH_LOGIN_PAGE) {
      ctx.state.rawAnswer = true;
      pageHeaders(ctx, 'oauth');
      if (ctx.method === 'GET') {
        ctx.type = 'html';
        ctx.body = signInPage(queryOf(ctx));
        return;
      }
      if (ctx.method === 'POST') return signInPost(ctx, next);
    }
    if (ctx.path === OAUTH_CONSENT_PAGE) {
      ctx.state.rawAnswer = true;
      pageHeaders(ctx, 'oauth');
      if (ctx.method === 'GET') {
        const session = await sessionOf(deps, ctx.headers).catch(() => null);
        if (!session) {
          ctx.type = 'html';
          ctx.body = signInPage(queryOf(ctx));
          return;
        }
        const params = new URLSearchParams(queryOf(ctx));
        const client = await oauthClientSummary(deps, params.get('client_id') ?? '');
        const scopes = (params.get('scope') ?? '').split(' ').filter(Boolean);
        ctx.type = 'html';
        ctx.body = page(
          'Connect an assistant',
          `<h1>Connect ${esc(client?.name ?? 'an unknown application')}?</h1>
<p><strong>${esc(client?.name ?? params.get('client_id') ?? '')}</strong>${client?.redirectHost ? ` (returning to <code>${esc(client.redirectHost)}</code>)` : ''} asks to act as <strong>${esc(session.email)}</strong> through this service's MCP connector.</p>
<p>Choose what it may do (you can narrow what it asked for; it can never do more than you can):</p>
<form method="post" action="${OAUTH_CONSENT_PAGE}"><input type="hidden" name="oauth_query" value="${esc(queryOf(ctx))}">
${grantBoxes(scopes)}
<ul><li>It asks you first before anything that can move credits (a trade, an order, a metric or proposal that opens books, a transfer, a withdrawal), whatever else you switch off, and before it funds, decides, publishes, removes or changes access (you can change this per connection).</li><li>Resource: <code>${esc(params.get('resource') ?? '')}</code>.</li><li>You can disconnect it at any time (DELETE /api/connections/{id}, or delete its key).</li></ul>
<div class="row"><button type="submit" name="accept" value="yes">Allow</button><button type="submit" name="accept" value="no">Deny</button></div></form>`,
        );
        return;
      }
      if (ctx.method === 'POST') return consentPost(ctx, next);
    }
    await next();
  };
}

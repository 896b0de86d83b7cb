import type Koa from 'koa';
import { isAPIError } from 'better-auth/api';
import { fromNodeHeaders } from 'better-auth/node';
import type { Deps } from '../../deps';
import { accountSystem } from '../../services/accounts';

/**
 * The OAuth pages' two form answers, through the account system's server API (issue 58: its
 * endpoints called directly, not its HTTP handler with an Origin set on the browser's behalf; the
 * pages check the form's origin themselves). What comes back is HTTP-shaped (cookies to set, where
 * the browser goes next), so it stays here at the edge.
 */
export interface FlowStep {
  setCookies: string[];
  redirect: string | null;
  error: string | null;
}

/** Where the library sends the browser: `{ url }` or `{ redirect_uri }` in its answer (it answers JSON to a server call). */
function redirectIn(answer: unknown): string | null {
  if (!answer || typeof answer !== 'object') return null;
  const a = answer as Record<string, unknown>;
  return (typeof a.url === 'string' && a.url) || (typeof a.redirect_uri === 'string' && a.redirect_uri) || null;
}

/** The account system's answer, or its refusal, as the page's next step. */
async function stepOf(call: () => Promise<{ headers: Headers | null; response: unknown }>): Promise<FlowStep> {
  try {
    const { headers, response } = await call();
    return { setCookies: headers?.getSetCookie() ?? [], redirect: redirectIn(response), error: null };
  } catch (err) {
    if (!isAPIError(err)) throw err;
    // A redirect is thrown as a 302 whose headers (the context's own) carry its Location and cookies.
    const headers = new Headers(err.headers);
    const location = headers.get('location');
    if (err.statusCode === 302 && location) return { setCookies: headers.getSetCookie(), redirect: location, error: null };
    const body = (err.body ?? {}) as Record<string, unknown>;
    return { setCookies: [], redirect: null, error: String(body.message ?? body.error_description ?? body.error ?? `refused (${err.statusCode})`) };
  }
}

/**
 * The browser's own request as the library reads it: its authorize step (run after a sign-in or a
 * consent) needs one and reads the session from its headers. Nothing is added to what the browser sent.
 */
function browser(deps: Deps, ctx: Koa.Context): { request: Request; headers: Headers } {
  const headers = fromNodeHeaders(ctx.headers);
  return { request: new Request(`${deps.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}${ctx.originalUrl}`, { method: ctx.method, headers }), headers };
}

/** The sign-in page's form: email and password, continuing the authorization request it was sent with. */
export function signInForAuthorization(deps: Deps, ctx: Koa.Context, input: { email: string; password: string; oauthQuery: string }): Promise<FlowStep> {
  // oauth_query is the OAuth provider plugin's field (its before-hook reads it), not signInEmail's own.
  const body = { email: input.email, password: input.password, oauth_query: input.oauthQuery };
  return stepOf(() => accountSystem(deps).auth.api.signInEmail({ body, ...browser(deps, ctx), asResponse: false, returnHeaders: true }));
}

/** The consent page's answer (the session cookie must be the person's own); `scope`, when given, narrows what was asked. */
export function answerConsent(deps: Deps, ctx: Koa.Context, input: { accept: boolean; oauthQuery: string; scope?: string }): Promise<FlowStep> {
  const body = { accept: input.accept, oauth_query: input.oauthQuery, ...(input.scope !== undefined ? { scope: input.scope } : {}) };
  return stepOf(() => accountSystem(deps).auth.api.oauth2Consent({ body, ...browser(deps, ctx), asResponse: false, returnHeaders: true }));
}

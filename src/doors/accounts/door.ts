import Router from '@koa/router';
import type Koa from 'koa';
import { isAPIError } from 'better-auth/api';
import { fromNodeHeaders } from 'better-auth/node';
import { brakeSignIn } from './guard';
import { limitByAddress } from '../../api/middleware/rateLimit';
import type { Deps } from '../../deps';
import { ApiError, DomainError } from '../../errors';
import { endedSessionCookie } from '../../edge/sessionCookie';
import { handleForm, seeOther } from '../../edge/forms';
import { accountSystem } from '../../services/accounts';
import { deleteAuthMe } from '../../api/routes';
import { apiAct, signedInParticipant, visitorOf, type Visitor } from '../../web/api';
import { localPath, refusalOf, SIGN_IN_PAGE, type FormState, type Refusal } from '../../web/forms';
import { formPost, sendPage } from '../../web';
import type { PageParts } from '../../web/layout';
import { DELETE_ACCOUNT_PATH, settingsRedraw } from '../../web/settings';
import { MIN_PASSWORD, notDonePage, RESET_PAGE, resetPage, SIGN_OUT_PATH, SIGN_UP_PAGE, signInPage, signUpPage } from './pages';

/**
 * The account pages (issue 59): sign-up, sign-in, sign-out and password reset as forms in the web's
 * layout, working without script. They call the account system's server API (Better Auth's
 * auth.api.*) directly, with the browser's headers, and hand its Set-Cookie on to the browser. The
 * same brakes as its JSON routes: the per-address limit on every form, the sign-in brake per email
 * and per address. Refusals are sentences beside the field they are about; the forms are drawn by
 * pages.ts.
 */

/** What the account system's own codes are about: the field its refusal is drawn beside. */
function fieldOfReason(reason: string): string | null {
  if (reason === 'INVALID_EMAIL_OR_PASSWORD' || reason.includes('PASSWORD')) return 'password';
  if (reason.includes('EMAIL')) return 'email';
  if (reason.includes('NAME')) return 'name';
  if (reason.includes('TOKEN')) return 'token';
  return null;
}

const SENTENCES: Partial<Record<string, string>> = {
  INVALID_EMAIL_OR_PASSWORD: 'Wrong email or password.',
  INVALID_TOKEN: 'This reset link has expired or was used already: ask for a new one below.',
};

/** A refusal of the account system (Better Auth's APIError) or of ours, as the page shows it. */
function refusalFrom(err: unknown): Refusal | null {
  if (err instanceof DomainError) return refusalOf(err);
  if (!isAPIError(err)) return null;
  const body = (err.body ?? {}) as { code?: string; message?: string };
  const reason = body.code ?? '';
  const message = SENTENCES[reason] ?? (body.message ? (/[.!?]$/.test(body.message) ? body.message : `${body.message}.`) : 'The account system refused.');
  return { code: 'account_refused', sentence: message, field: fieldOfReason(reason), status: err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400 };
}

/** A refusal of ours about one field, before the account system is asked. */
const fieldError = (field: string, sentence: string) => new ApiError('validation_failed', sentence, { issues: [{ path: field, message: sentence }] });

/** The next page after signing in: a path on this site only. */
const nextOf = (raw: string | null | undefined) => localPath(raw, '/');
const query = (ctx: Koa.Context, name: string) => (typeof ctx.query[name] === 'string' ? (ctx.query[name] as string) : null);

/** Hands the account system's cookies (the session, or its end) on to the browser. */
function forwardCookies(ctx: Koa.Context, headers: Headers | undefined): void {
  for (const c of headers?.getSetCookie() ?? []) ctx.append('Set-Cookie', c);
}

/** The address just signed up with, for the sign-in page that follows (HttpOnly, that page only, 10 minutes). */
const SIGNED_UP_COOKIE = 'mpps-signed-up';

function signedUpCookie(deps: Deps, value: string, maxAge: number): string {
  return `${SIGNED_UP_COOKIE}=${value}; Path=${SIGN_IN_PAGE}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${deps.config.development ? '' : '; Secure'}`;
}

function signedUpEmail(ctx: Koa.Context): string | null {
  const raw = ctx.cookies.get(SIGNED_UP_COOKIE);
  if (!raw) return null;
  try {
    const email = decodeURIComponent(raw);
    return email.length <= 320 && email.includes('@') ? email : '';
  } catch {
    return '';
  }
}

function clearSessionCookie(ctx: Koa.Context, deps: Deps): void {
  ctx.append('Set-Cookie', endedSessionCookie(deps.config));
}

/** The page drawn with the header: who is signed in (when the request carries a cookie). */
async function draw(deps: Deps, ctx: Koa.Context, status: number, parts: PageParts, started: number): Promise<void> {
  sendPage(ctx, status, { ...parts, me: await signedInParticipant(deps, visitorOf(ctx, null)) }, started);
}

/**
 * One account form, on the one form-post skeleton (src/edge/forms.ts): the act says where the
 * browser goes next (303). A refusal draws the form again with the sentence beside its field.
 */
function accountForm(deps: Deps, act: (ctx: Koa.Context, values: URLSearchParams) => Promise<string>, redraw: (values: URLSearchParams, state: FormState) => PageParts): Koa.Middleware {
  return handleForm({
    config: deps.config,
    act: async (ctx, values) => seeOther(ctx, await act(ctx, values)),
    refused: async (ctx, err, values, started) => {
      const refusal = refusalFrom(err);
      if (!refusal) throw err;
      if (!values) {
        await draw(deps, ctx, refusal.status, notDonePage(refusal), started);
        return;
      }
      await draw(deps, ctx, refusal.status, redraw(values, { form: values.get('form') ?? '', values, refusal }), started);
    },
  });
}

const trimmed = (values: URLSearchParams, name: string) => (values.get(name) ?? '').trim();

export function accountPages(deps: Deps): Koa.Middleware {
  const auth = () => accountSystem(deps).auth;
  const router = new Router();

  router.get(SIGN_UP_PAGE, async (ctx) => draw(deps, ctx, 200, signUpPage(nextOf(query(ctx, 'next')), null), performance.now()));
  router.post(
    SIGN_UP_PAGE,
    accountForm(
      deps,
      async (ctx, v) => {
        const name = trimmed(v, 'name');
        const email = trimmed(v, 'email');
        const password = v.get('password') ?? '';
        if (!name) throw fieldError('name', 'Give a name: it is how others see you.');
        if (!email) throw fieldError('email', 'Give your email address.');
        if (password.length < MIN_PASSWORD) throw fieldError('password', `The password must be ${MIN_PASSWORD} characters or more.`);
        await limitByAddress(deps, ctx, 'auth');
        await auth().api.signUpEmail({ body: { name, email, password }, headers: fromNodeHeaders(ctx.headers) });
        // Sign-up answers alike whether or not the address had an account (nothing is revealed), and signs nobody in;
        // the sign-in page that follows has the address filled in (a short-lived cookie for that page only, never in the URL).
        ctx.append('Set-Cookie', signedUpCookie(deps, encodeURIComponent(email), 600));
        const next = nextOf(v.get('next'));
        return `${SIGN_IN_PAGE}?signed-up=1${next !== '/' ? `&next=${encodeURIComponent(next)}` : ''}`;
      },
      (v, state) => signUpPage(nextOf(v.get('next')), state),
    ),
  );

  router.get(SIGN_IN_PAGE, async (ctx) => {
    const note = query(ctx, 'signed-up') ? 'If the address was new, your account is ready: sign in.' : query(ctx, 'reset') ? 'Your password is changed: sign in with the new one.' : null;
    const email = query(ctx, 'signed-up') ? signedUpEmail(ctx) : null;
    if (email !== null) ctx.append('Set-Cookie', signedUpCookie(deps, '', 0));
    const filled: FormState | null = email ? { form: 'sign-in', values: new URLSearchParams({ email }), refusal: null } : null;
    await draw(deps, ctx, 200, signInPage(nextOf(query(ctx, 'next')), filled, note), performance.now());
  });
  router.post(
    SIGN_IN_PAGE,
    accountForm(
      deps,
      async (ctx, v) => {
        const email = trimmed(v, 'email');
        if (!email) throw fieldError('email', 'Give your email address.');
        if (!v.get('password')) throw fieldError('password', 'Give your password.');
        await limitByAddress(deps, ctx, 'auth');
        await brakeSignIn(deps, ctx, email.toLowerCase().slice(0, 320));
        const { headers } = await auth().api.signInEmail({ body: { email, password: v.get('password') ?? '' }, headers: fromNodeHeaders(ctx.headers), returnHeaders: true });
        forwardCookies(ctx, headers);
        return nextOf(v.get('next'));
      },
      (v, state) => signInPage(nextOf(v.get('next')), state),
    ),
  );

  router.post(
    SIGN_OUT_PATH,
    handleForm({
      config: deps.config,
      act: async (ctx, values) => {
        try {
          const { headers } = await auth().api.signOut({ headers: fromNodeHeaders(ctx.headers), returnHeaders: true });
          forwardCookies(ctx, headers);
        } catch (err) {
          // No session (already signed out, or it ended): the cookie goes all the same.
          if (!isAPIError(err)) throw err;
        }
        clearSessionCookie(ctx, deps);
        seeOther(ctx, nextOf(values.get('back')));
      },
      refused: async (ctx, err, _values, started) => {
        if (!(err instanceof DomainError)) throw err;
        const r = refusalOf(err);
        sendPage(ctx, r.status, notDonePage(r), started);
      },
    }),
  );

  router.get(RESET_PAGE, async (ctx) => {
    const error = query(ctx, 'error');
    const note = query(ctx, 'sent') ? 'If the address has an account, a link is on its way: open it within an hour.' : error ? SENTENCES.INVALID_TOKEN! : null;
    const token = error ? null : query(ctx, 'token');
    await draw(deps, ctx, 200, resetPage(null, token && token.length <= 500 ? token : null, note), performance.now());
  });
  router.post(
    RESET_PAGE,
    accountForm(
      deps,
      async (ctx, v) => {
        await limitByAddress(deps, ctx, 'auth');
        if (v.get('form') === 'reset-set') {
          const newPassword = v.get('password') ?? '';
          if (newPassword.length < MIN_PASSWORD) throw fieldError('password', `The password must be ${MIN_PASSWORD} characters or more.`);
          await auth().api.resetPassword({ body: { newPassword, token: v.get('token') ?? '' }, headers: fromNodeHeaders(ctx.headers) });
          return `${SIGN_IN_PAGE}?reset=1`;
        }
        const email = trimmed(v, 'email');
        if (!email) throw fieldError('email', 'Give your email address.');
        // The mailed link opens the account system's check, which comes back here with ?token= (or ?error=).
        await auth().api.requestPasswordReset({ body: { email, redirectTo: RESET_PAGE }, headers: fromNodeHeaders(ctx.headers) });
        return `${RESET_PAGE}?sent=1`;
      },
      (v, state) => resetPage(state, v.get('form') === 'reset-set' ? (v.get('token') ?? '') : null),
    ),
  );

  // Deleting the account: DELETE /api/auth/me for the session, confirmed by typing the name; the
  // session cookie is cleared here (the route's own clearing goes to the in-process caller).
  router.post(
    DELETE_ACCOUNT_PATH,
    formPost(
      deps,
      (ctx) => visitorOf(ctx, null),
      async (d, ctx, v: Visitor, values) => {
        const me = await signedInParticipant(d, v);
        if (!me || trimmed(values, 'confirm') !== me.name) throw fieldError('confirm', `Type your name exactly as shown (${me?.name ?? ''}) to delete your account.`);
        await apiAct(d, v, deleteAuthMe);
        clearSessionCookie(ctx, d);
        return '/';
      },
      settingsRedraw,
    ),
  );

  const routes = router.routes() as Koa.Middleware;
  return async (ctx, next) => {
    await routes(ctx as never, next);
    // A page found the browser's session ended (src/web/index.ts): the cookie goes.
    if ((ctx.state as { sessionEnded?: boolean }).sessionEnded) clearSessionCookie(ctx, deps);
  };
}


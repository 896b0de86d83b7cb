import { fieldRefusal, formRefusal, invalidAttrs, SIGN_IN_PAGE, valueOf, type FormState, type Refusal } from '../../web/forms';
import { html, type Html } from '../../web/html';
import type { PageParts } from '../../web/layout';
import { RESET_PASSWORD_PAGE } from '../../services/accounts';

/**
 * The account pages' forms (issue 59), drawn in the web's layout: sign-up, sign-in, password reset.
 * A refusal is drawn beside the field it is about; the routes that answer them are door.ts's.
 */
export const SIGN_UP_PAGE = '/sign-up';
export const SIGN_OUT_PATH = '/sign-out';
export const RESET_PAGE = RESET_PASSWORD_PAGE;

export const MIN_PASSWORD = 8;

function input(state: FormState | null, form: string, name: string, label: string, attrs: Html, keep = true): Html {
  const id = `${form}-${name}`;
  return html`<label for="${id}">${label}</label><input id="${id}" name="${name}"${attrs}${keep ? html` value="${valueOf(state, form, name)}"` : ''}${invalidAttrs(state, form, name)}>${fieldRefusal(state, form, name)}`;
}

export function signUpPage(next: string, state: FormState | null): PageParts {
  const f = 'sign-up';
  return {
    title: 'Sign up',
    body: html`<h1>Sign up</h1><p class="lead">An account gets its own participant: trade, propose and discuss in the workspaces you join.</p>
<form method="post" action="${SIGN_UP_PAGE}" class="stack" novalidate><input type="hidden" name="form" value="${f}"><input type="hidden" name="next" value="${next}">
${input(state, f, 'name', 'Name', html` autocomplete="name" required maxlength="200"`)}
${input(state, f, 'email', 'Email', html` type="email" autocomplete="email" required maxlength="320"`)}
${input(state, f, 'password', `Password (${MIN_PASSWORD} characters or more)`, html` type="password" autocomplete="new-password" required minlength="${String(MIN_PASSWORD)}" maxlength="128"`, false)}
${formRefusal(state, f, ['name', 'email', 'password'])}<button type="submit">Sign up</button></form>
<p>Have an account? <a href="${SIGN_IN_PAGE}${next !== '/' ? `?next=${encodeURIComponent(next)}` : ''}">Sign in</a>.</p>`,
  };
}

export function signInPage(next: string, state: FormState | null, note: string | null = null): PageParts {
  const f = 'sign-in';
  const back = next !== '/' ? `?next=${encodeURIComponent(next)}` : '';
  return {
    title: 'Sign in',
    body: html`<h1>Sign in</h1>${note ? html`<p class="note" role="status">${note}</p>` : ''}
<form method="post" action="${SIGN_IN_PAGE}" class="stack" novalidate><input type="hidden" name="form" value="${f}"><input type="hidden" name="next" value="${next}">
${input(state, f, 'email', 'Email', html` type="email" autocomplete="username" required maxlength="320"`)}
${input(state, f, 'password', 'Password', html` type="password" autocomplete="current-password" required maxlength="128"`, false)}
${formRefusal(state, f, ['email', 'password'])}<button type="submit">Sign in</button></form>
<p>No account yet? <a href="${SIGN_UP_PAGE}${back}">Sign up</a>. Forgot your password? <a href="${RESET_PAGE}">Reset it</a>.</p>`,
  };
}

export function resetPage(state: FormState | null, token: string | null, note: string | null = null): PageParts {
  if (token) {
    const f = 'reset-set';
    return {
      title: 'Choose a new password',
      body: html`<h1>Choose a new password</h1><p class="lead">Every session of the account ends: sign in again with the new password.</p>
<form method="post" action="${RESET_PAGE}" class="stack" novalidate><input type="hidden" name="form" value="${f}"><input type="hidden" name="token" value="${token}">
${input(state, f, 'password', `New password (${MIN_PASSWORD} characters or more)`, html` type="password" autocomplete="new-password" required minlength="${String(MIN_PASSWORD)}" maxlength="128"`, false)}
${fieldRefusal(state, f, 'token')}${formRefusal(state, f, ['password', 'token'])}<button type="submit">Set the password</button></form>`,
    };
  }
  const f = 'reset-request';
  return {
    title: 'Reset your password',
    body: html`<h1>Reset your password</h1>${note ? html`<p class="note" role="status">${note}</p>` : ''}<p class="lead">We email a link to choose a new password, valid for an hour, if the address has an account.</p>
<form method="post" action="${RESET_PAGE}" class="stack" novalidate><input type="hidden" name="form" value="${f}">
${input(state, f, 'email', 'Email', html` type="email" autocomplete="email" required maxlength="320"`)}
${formRefusal(state, f, ['email'])}<button type="submit">Email me a link</button></form>
<p><a href="${SIGN_IN_PAGE}">Back to sign in</a></p>`,
  };
}

/** A refusal with no form to draw again (a cross-site post, a body too large, a refused sign-out). */
export function notDonePage(r: Pick<Refusal, 'code' | 'sentence'>): PageParts {
  return { title: 'Not done', body: html`<h1>Not done</h1><p class="lead" data-code="${r.code}">${r.sentence}</p><p><a href="/">Home</a></p>` };
}

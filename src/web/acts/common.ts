import type Koa from 'koa';
import { DomainError } from '../../errors';
import type { Deps } from '../../deps';
import { fieldRefusal, formBasics, formRefusal, invalidAttrs, localPath, refusalOf, SIGN_IN_PAGE, valueOf, type FormState } from '../forms';
import { html, type Html } from '../html';
import type { Visitor } from '../api';

/**
 * What the acting forms (issue 59, "Acting") share: the hidden fields with the key kept across a
 * Review step, labelled fields with the refusal beside them, the form values as the API's body
 * types, and the "done" note a page shows after the redirect.
 */

const SLUG = /^[\w.-]{1,200}$/;

/** The workspace slug of a page's path (the same check as the pages' own). */
export function workspaceSlug(ctx: Koa.Context): string {
  const slug = String(ctx.params.ws ?? '');
  if (!SLUG.test(slug)) throw new DomainError('workspace_not_found', 'No such workspace.');
  return slug;
}

/**
 * The hidden fields of an acting form. Drawn again after a refusal or a Review step, the form keeps
 * the Idempotency-Key it was first drawn with: a refused or dry-run call consumes no key, and the
 * Confirm that follows is then one act however often it is sent.
 */
export function basics(form: string, back: string, state?: FormState | null): Html {
  // A key the API says was used for other values is not kept: the next send gets a fresh one.
  const kept = state?.form === form && state.refusal?.code !== 'idempotency_key_reuse' ? state.values.get('idem') : null;
  if (!kept || !/^[A-Za-z0-9-]{8,100}$/.test(kept)) return formBasics(form, back);
  return html`<input type="hidden" name="form" value="${form}"><input type="hidden" name="back" value="${back}"><input type="hidden" name="idem" value="${kept}">`;
}

/** The same values again as hidden fields (the Confirm form after a Review carries what was reviewed). */
export function carried(values: URLSearchParams, names: readonly string[]): Html[] {
  return names.flatMap((n) => values.getAll(n).map((v) => html`<input type="hidden" name="${n}" value="${v}">`));
}

interface FieldOpts {
  type?: string;
  required?: boolean;
  value?: string;
  hint?: string;
  textarea?: boolean;
  attrs?: Html;
}

/** A labelled field with its refusal beside it (and aria-invalid pointing at it) when the API refused that field. */
export function field(state: FormState | null | undefined, form: string, name: string, label: string, opts: FieldOpts = {}): Html {
  const id = `${form}-${name}`;
  const value = valueOf(state, form, name, opts.value ?? '');
  const hint = opts.hint ? html` <small class="muted" id="${id}-hint">${opts.hint}</small>` : '';
  // The refusal describes the field when there is one, else its hint.
  const refused = invalidAttrs(state, form, name);
  const described = refused.text ? refused : opts.hint ? html` aria-describedby="${id}-hint"` : html``;
  const control = opts.textarea
    ? html`<textarea id="${id}" name="${name}" rows="4"${opts.required ? html` required` : ''}${described}${opts.attrs ?? ''}>${value}</textarea>`
    : html`<input id="${id}" name="${name}" type="${opts.type ?? 'text'}" value="${value}"${opts.required ? html` required` : ''}${opts.type === 'number' ? html` step="any" inputmode="decimal"` : ''}${described}${opts.attrs ?? ''}>`;
  return html`<div class="field"><label for="${id}">${label}</label>${hint} ${control}${fieldRefusal(state, form, name)}</div>`;
}

/** The refusal of the form as a whole (one about no field the form shows). */
export function wholeRefusal(state: FormState | null | undefined, form: string, fields: readonly string[]): Html {
  return formRefusal(state, form, fields);
}

/** "Done" after the redirect of an act (?done=<form>), announced to a screen reader. */
export function doneNote(state: FormState | null | undefined, form: string, sentence: string): Html {
  return state?.done && state.form === form ? html`<p class="done" role="status" data-done="${form}">${sentence}</p>` : html``;
}

/** The state of a page reached by an act's redirect (?done=<form>). */
export function doneOf(ctx: Koa.Context): FormState | undefined {
  const d = ctx.query.done;
  return typeof d === 'string' && /^[\w-]{1,40}$/.test(d) ? { form: d, values: new URLSearchParams(), refusal: null, done: true } : undefined;
}

/** The page to go back to after an act (the form's `back`), saying which form acted, at its section. */
export function backDone(values: URLSearchParams, fallback: string, form: string, anchor?: string): string {
  const u = new URL(localPath(values.get('back'), fallback), 'http://page.invalid');
  u.searchParams.delete('done');
  u.searchParams.set('done', form);
  return `${u.pathname}${u.search}${anchor ? `#${anchor}` : ''}`;
}

/** A form's number field as the API's body takes it: absent when blank, the number when it is one, else the text (the API's refusal names it). */
export function numberOf(values: URLSearchParams, name: string): number | string | undefined {
  const s = values.get(name)?.trim();
  if (!s) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : s;
}

/** A text field: absent when blank. */
export function textOf(values: URLSearchParams, name: string): string | undefined {
  const s = values.get(name);
  return s === null || !s.trim() ? undefined : s;
}

/** Whether the visitor sends credentials at all (a session cookie or a key): only then are the acting forms drawn. */
export function hasCredentials(v: Visitor): boolean {
  return !!(v.headers.cookie || v.headers['x-agent-key'] || v.headers['x-api-key']);
}

/** The way to act for a visitor without a session: sign in and come back here. */
export function signInTo(back: string, what: string): Html {
  return html`<p class="muted"><a href="${`${SIGN_IN_PAGE}?next=${encodeURIComponent(back)}`}">Sign in</a> to ${what}.</p>`;
}

/** Which step of a two-step form was sent: "review" (a dry run, nothing written) or "confirm". */
export function stepOf(values: URLSearchParams): 'review' | 'confirm' {
  return values.get('step') === 'confirm' ? 'confirm' : 'review';
}

/** A form's act as the pages' routes take it (see index.ts Act). */
type ReviewAct = (deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams) => Promise<unknown>;

/**
 * The state of a page reached by a review's redirect (`?form=<f>&step=review&<values>`): the same
 * dry run again, for the visitor, so the page is a GET that Back returns to without a resend prompt.
 * Only the named forms, whose review step writes nothing, are reviewed this way.
 */
export async function reviewOf(deps: Deps, ctx: Koa.Context, v: Visitor, act: ReviewAct, forms: readonly string[]): Promise<FormState | undefined> {
  const form = ctx.query.form;
  if (typeof form !== 'string' || !forms.includes(form) || ctx.query.step !== 'review' || !hasCredentials(v)) return undefined;
  const values = new URLSearchParams(ctx.querystring);
  values.delete('view');
  values.set('step', 'review');
  try {
    const answer = await act(deps, ctx, v, values);
    if (!answer || typeof answer !== 'object' || !('show' in answer)) throw new Error(`the ${form} form's review step did not answer a dry run`);
    return { form, values, refusal: null, quote: (answer as { show: unknown }).show };
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { form, values, refusal: refusalOf(err) };
  }
}

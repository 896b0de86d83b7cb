import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import { ApiError, DomainError } from '../errors';
import { html, type Html } from './html';

/**
 * Forms on the pages (issue 59): a form posts to the page's own address, the act goes through the
 * API in process for the visitor (src/web/api.ts apiAct), and the browser is redirected back (303)
 * or, when refused, shown the page again with the API's sentence beside the field it is about.
 */

/** The largest form body a page reads (a comment or a proposal's text fits well inside). */
export const FORM_LIMIT = 64 * 1024;

/** What a refused act leaves for the page that shows the form again. */
export interface Refusal {
  code: string;
  sentence: string;
  /** The form field the refusal is about (the first invalid body field), or null for the form as a whole. */
  field: string | null;
  status: number;
}

/** The state a form is drawn in: the values sent (to fill the fields again) and the refusal, if any. */
export interface FormState {
  /** Which form on the page was sent (its `form` field), so only that one shows the refusal. */
  form: string;
  values: URLSearchParams;
  refusal: Refusal | null;
}

/** The refusal a page shows for an error the API threw: its sentence, its code, the field named by a validation issue. */
export function refusalOf(err: DomainError): Refusal {
  const e = ApiError.from(err);
  // The API's validation issues name their path as 'a.b.0' (registry.ts validationError); the field is its first part.
  const issues = (err.details as { issues?: Array<{ path?: unknown }> } | undefined)?.issues;
  const path = Array.isArray(issues) && issues.length ? issues[0].path : undefined;
  const first = Array.isArray(path) ? path[0] : typeof path === 'string' ? path.split('.')[0] : undefined;
  return { code: e.code, sentence: e.message, field: typeof first === 'string' && first ? first : null, status: e.status };
}

/**
 * The body of a page's form (application/x-www-form-urlencoded, at most FORM_LIMIT bytes). Anything
 * else is refused with a sentence: a page's forms send nothing else.
 */
export async function readForm(ctx: Koa.Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new ApiError('unsupported_media_type', 'This page takes its own forms only (application/x-www-form-urlencoded).');
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > FORM_LIMIT) throw new ApiError('payload_too_large', `The form is over ${FORM_LIMIT / 1024} KB: nothing was done.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of ctx.req) {
    size += (c as Buffer).length;
    if (size > FORM_LIMIT) throw new ApiError('payload_too_large', `The form is over ${FORM_LIMIT / 1024} KB: nothing was done.`);
    chunks.push(c as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * A form post must come from this service's own pages. A browser says where a request came from
 * (Sec-Fetch-Site, else Origin); a cross-site one is refused before its body is read. A request
 * naming neither is no browser's cross-site post: the session cookie is SameSite=Lax, which a
 * cross-site POST does not carry, so such a post acts with no session at all.
 */
export function refuseCrossSite(ctx: Koa.Context, publicBaseUrl: string, sentence = 'This form only accepts posts from this service\'s own pages: nothing was done.'): void {
  const site = ctx.get('sec-fetch-site');
  const origin = ctx.get('origin');
  const own = new URL(publicBaseUrl).origin;
  // The request's own origin also counts (a service reached under another name than PUBLIC_BASE_URL).
  const self = `${ctx.protocol}://${ctx.host}`;
  // Under Referrer-Policy: no-referrer a browser sends `Origin: null` on its own form posts; its
  // Sec-Fetch-Site (which no page can forge) then says same-origin. A null origin without it is refused.
  const foreign = origin === 'null' ? site !== 'same-origin' : !!origin && origin !== own && origin !== self;
  if ((site && site !== 'same-origin' && site !== 'none') || foreign) {
    throw new ApiError('origin_not_allowed', sentence);
  }
}

/** A path on this site to go back to (a form's `back` field, sign-in's `next`): never another host. */
export function localPath(raw: string | null | undefined, fallback: string): string {
  if (!raw || raw.length > 2000 || !raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\') || [...raw].some((c) => c.charCodeAt(0) < 0x20)) return fallback;
  return raw;
}

/**
 * The hidden fields every acting form carries: which form it is, the page to come back to, and a
 * fresh Idempotency-Key drawn when the page was drawn (a double click or a resent form acts once).
 */
export function formBasics(form: string, back: string): Html {
  return html`<input type="hidden" name="form" value="${form}"><input type="hidden" name="back" value="${back}"><input type="hidden" name="idem" value="${randomUUID()}">`;
}

/** The Idempotency-Key a form sent (its hidden `idem` field), scoped to the web; null when absent or malformed. */
export function idempotencyKeyOf(values: URLSearchParams): string | null {
  const k = values.get('idem');
  return k && /^[A-Za-z0-9-]{8,100}$/.test(k) ? `web:${k}` : null;
}

/** The refusal beside a field, when the state's refusal is about it (role=alert: read out when the page returns). */
export function fieldRefusal(state: FormState | null | undefined, form: string, field: string): Html {
  const r = state?.form === form ? state.refusal : null;
  if (!r || r.field !== field) return html``;
  return html`<p class="err" id="${form}-${field}-err" role="alert" data-code="${r.code}">${r.sentence}</p>`;
}

/** The refusal of the whole form (one not about a single field), shown above its button. */
export function formRefusal(state: FormState | null | undefined, form: string, fields: readonly string[] = []): Html {
  const r = state?.form === form ? state.refusal : null;
  if (!r || (r.field && fields.includes(r.field))) return html``;
  return html`<p class="err" role="alert" data-code="${r.code}">${r.sentence}</p>`;
}

/** The value a field is drawn with again after a refusal (what the person typed), else the default. */
export function valueOf(state: FormState | null | undefined, form: string, field: string, fallback = ''): string {
  return state?.form === form ? (state.values.get(field) ?? fallback) : fallback;
}

/** `aria-invalid` and `aria-describedby` for a field the refusal is about. */
export function invalidAttrs(state: FormState | null | undefined, form: string, field: string): Html {
  const r = state?.form === form ? state.refusal : null;
  return r?.field === field ? html` aria-invalid="true" aria-describedby="${form}-${field}-err"` : html``;
}

/** Where a visitor without a session is sent to sign in (with ?next= the page to come back to). */
export const SIGN_IN_PAGE = '/sign-in';

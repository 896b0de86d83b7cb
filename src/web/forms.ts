import { randomUUID } from 'node:crypto';
import { ApiError, DomainError } from '../errors';
import { html, type Html } from './html';

/**
 * Forms on the pages (issue 59): a form posts to the page's own address, the act goes through the
 * API in process for the visitor (src/web/api.ts apiAct), and the browser is redirected back (303)
 * or, when refused, shown the page again with the API's sentence beside the field it is about.
 * The post itself (cross-site refusal, bounded read) is the one skeleton of src/edge/forms.ts.
 */

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
  /** A dry run's answer (a form's "Review" step): the page draws it with a Confirm button. */
  quote?: unknown;
  /** The form acted (the page was reached by its redirect, ?done=<form>): the page may say so. */
  done?: boolean;
}

/** The refusal a page shows for an error the API threw: its sentence, its code, the field named by a validation issue. */
export function refusalOf(err: DomainError): Refusal {
  const e = ApiError.from(err);
  // The API's validation issues name their path joined by dots ("metricIds.0"): the field is its first part.
  const issues = (err.details as { issues?: Array<{ path?: unknown }> } | undefined)?.issues;
  const path = Array.isArray(issues) && issues.length ? issues[0].path : undefined;
  const first = Array.isArray(path) ? path[0] : typeof path === 'string' && path ? path.split('.')[0] : undefined;
  return { code: e.code, sentence: e.message, field: typeof first === 'string' ? first : null, status: e.status };
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

import type Koa from 'koa';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { apiAct, apiRead, type Visitor } from '../api';
import type { FormState } from '../forms';
import { fieldRefusal, invalidAttrs, valueOf } from '../forms';
import { html, type Html } from '../html';
import { backDone, basics, doneNote, field, hasCredentials, numberOf, wholeRefusal, workspaceSlug } from './common';
import { getPredictionsMarkets, getWorkspacesCurrent, postMetricsByIdSettle } from '../../api/routes';

/**
 * Settling a metric early from its page (issue 59): a workspace manager files the final value and
 * the reason, and every open book of the metric resolves (POST /api/metrics/:id/settle). One step,
 * with a checkbox saying what it does; the form is drawn for a caller with manage only, and the API
 * decides all the same.
 */

const FORM = 'settle';
const FIELDS = ['value', 'reason', 'confirm'] as const;

/** The settle section of a metric page, or nothing for a visitor who may not manage the workspace. */
export async function settleSection(deps: Deps, v: Visitor, metricId: string, slug: string, openBooks: number, state?: FormState): Promise<Html> {
  const done = doneNote(state, FORM, 'Done: the metric is settled and its open books resolved.');
  if (!hasCredentials(v)) return done;
  const current = await apiRead(deps, v, getWorkspacesCurrent);
  if (!current.capabilities.includes('manage')) return done;
  const back = `/w/${slug}/metrics/${metricId}`;
  const checked = valueOf(state, FORM, 'confirm') === 'yes';
  return html`<section aria-labelledby="settle-h" class="act" id="settle"><h2 id="settle-h">Settle early</h2>
${done}
${
  openBooks
    ? html`<p>Files the value as this metric's final reading and resolves each of its ${openBooks} open books now, whatever their date.</p>
<form method="post" action="${back}#settle" id="settle-form">${basics(FORM, back, state)}
${field(state, FORM, 'value', 'Final value', { type: 'number', required: true, attrs: html` min="0"` })}
${field(state, FORM, 'reason', 'Reason', { required: true, hint: 'shown with each resolved book' })}
<div class="field"><input type="checkbox" id="settle-confirm" name="confirm" value="yes" required${checked ? html` checked` : ''}${invalidAttrs(state, FORM, 'confirm')}> <label for="settle-confirm">I understand this resolves every open book of this metric</label>${fieldRefusal(state, FORM, 'confirm')}</div>
${wholeRefusal(state, FORM, FIELDS)}
<p><button type="submit" id="settle-button">Settle now</button></p></form>`
    : html`<p class="muted">No open book to settle.</p>${wholeRefusal(state, FORM, [])}`
}</section>`;
}

/** The settle form posted on a metric page. */
export async function settleAct(deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string> {
  const id = String(ctx.params.id);
  const page = `/w/${workspaceSlug(ctx)}/metrics/${id}`;
  if (values.get('form') !== FORM) throw new DomainError('validation_failed', 'This page has no such form: nothing was done.');
  // The page's own check (the API has no such field): named as the API names a field, so it shows beside the box.
  if (values.get('confirm') !== 'yes') {
    throw new DomainError('validation_failed', 'Tick the box to confirm: settling resolves every open book of this metric. Nothing was done.', {
      issues: [{ path: 'confirm', message: 'must be ticked' }],
    });
  }
  // A resent form (a double click, the back button) would file the reading again with no book left to resolve: refused.
  const open = await apiRead(deps, v, getPredictionsMarkets, { query: { metricId: id, limit: '1' } });
  if (!open.length) throw new DomainError('conflict', 'This metric has no open book left to settle: nothing was done.');
  await apiAct(deps, v, postMetricsByIdSettle, { params: { id }, body: { value: numberOf(values, 'value'), reason: values.get('reason') ?? '' } });
  return backDone(values, page, FORM, 'settle');
}

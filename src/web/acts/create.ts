import type Koa from 'koa';
import type { Deps } from '../../deps';
import { apiAct, apiQuote, apiRead, type AnswerOf, type QuoteOf, type Visitor } from '../api';
import { idempotencyKeyOf, valueOf, type FormState } from '../forms';
import { fmtCredits } from '../format';
import { html, type Html } from '../html';
import type { PageParts } from '../layout';
import { backDone, basics, carried, field, hasCredentials, numberOf, signInTo, stepOf, textOf, wholeRefusal, workspaceSlug } from './common';
import { getMetrics, getStatus, postMetrics, postProposals, postWorkspaces } from '../../api/routes';

/**
 * Creating from the pages (issue 59): a workspace (/workspaces/new), a metric (/w/:ws/metrics/new)
 * and a proposal (/w/:ws/proposals/new). A metric and a proposal open books that someone pays for:
 * their form's first step is the API's dry run, drawn as the cost per book, the total and whether
 * the payer's balance covers it, with a Confirm form carrying the same values and Idempotency-Key.
 */

/** The dry run of POST /metrics (its dryRunResponse) or POST /proposals (the ProposalQuote member of its answer). */
type OpeningQuote = QuoteOf<typeof postMetrics> | Extract<AnswerOf<typeof postProposals>, { dryRun: true }>;

/** The cost a dry run answered: each book it would open and what it would be paid, the total, the payer's balance. */
function costOf(q: OpeningQuote, payer: string): Html {
  return html`<div class="quote" id="cost" role="status" data-field="subsidyNeeded" data-value="${q.subsidyNeeded}">
<p><strong>Cost: ${fmtCredits(q.subsidyNeeded)}</strong>, paid by ${payer} (balance ${fmtCredits(q.balance)}${q.balanceCovers ? ', which covers it' : ', which does not cover every book'}).</p>
${
  q.books.length
    ? html`<div class="scroll" tabindex="0" role="region" aria-label="Books it opens (scrolls sideways on a narrow screen)"><table><caption>Books it opens</caption><thead><tr><th scope="col">Target date</th><th scope="col">Branch</th><th scope="col">Subsidy</th><th scope="col">Funded</th></tr></thead><tbody>${q.books.map(
        (b) => html`<tr><td>${b.targetDate}</td><td>${b.branch ?? '—'}</td><td class="num">${fmtCredits(b.planned)}</td><td>${b.funded ? 'yes' : 'no'}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p class="muted">It opens no book.</p>`
}
${q.unfundedBooks.length ? html`<p class="muted">${q.unfundedBooks.length} book(s) would open unfunded (anyone may fund them from the book's page).</p>` : ''}
${q.refusal ? html`<p class="err" role="alert" data-code="${q.refusal.code}">${q.refusal.error}</p>` : ''}
</div>`;
}

function confirm(form: string, back: string, state: FormState, names: readonly string[], label: string): Html {
  return html`<form method="post" action="${back}" id="${form}-confirm-form">${basics(form, back, state)}<input type="hidden" name="step" value="confirm">${carried(state.values, names)}<p><button type="submit" id="${form}-confirm">${label}</button></p></form>`;
}

async function workspaceOf(deps: Deps, v: Visitor): Promise<{ slug: string; name: string }> {
  return (await apiRead(deps, v, getStatus)).workspace;
}

// ---- a workspace ----

const WS_FIELDS = ['name', 'slug', 'description', 'public'] as const;

export async function newWorkspacePage(_deps: Deps, _v: Visitor, state?: FormState): Promise<PageParts> {
  const back = '/workspaces/new';
  const f = 'workspace';
  const v = _v;
  const body = !hasCredentials(v)
    ? signInTo(back, 'create a workspace')
    : html`<form method="post" action="${back}" id="workspace-form">${basics(f, back, state)}
${field(state, f, 'name', 'Name', { required: true })}
${field(state, f, 'slug', 'Address', { hint: 'lowercase letters, digits and -, as in /w/<address>; left blank, one is made from the name' })}
${field(state, f, 'description', 'Description', { textarea: true })}
<p class="field"><label><input type="checkbox" name="public" value="true"${valueOf(state, f, 'public') === 'true' ? html` checked` : ''}> Public: anyone may read it and join it to trade</label></p>
${wholeRefusal(state, f, WS_FIELDS)}
<p><button type="submit">Create the workspace</button></p></form>
<p class="muted">Creating a workspace costs nothing; its metrics' books are paid by you, its owner, and each metric shows its cost before it is created.</p>`;
  return { title: 'New workspace', body: html`<h1>New workspace</h1>${body}` };
}

export async function newWorkspaceAct(deps: Deps, _ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string> {
  const ws = await apiAct(deps, v, postWorkspaces, {
    body: { name: values.get('name') ?? '', slug: textOf(values, 'slug'), description: textOf(values, 'description'), public: values.get('public') === 'true' },
  });
  return `/w/${encodeURIComponent(ws.slug)}/metrics/new?done=workspace`;
}

// ---- a metric ----

const METRIC_FIELDS = ['name', 'description', 'value', 'formula', 'marketRangeMax'] as const;

function metricBody(values: URLSearchParams) {
  return {
    name: values.get('name') ?? '',
    description: textOf(values, 'description'),
    value: numberOf(values, 'value'),
    formula: textOf(values, 'formula'),
    marketRangeMax: numberOf(values, 'marketRangeMax'),
  };
}

export async function newMetricPage(deps: Deps, v: Visitor, state?: FormState): Promise<PageParts> {
  const ws = await workspaceOf(deps, v);
  const back = `/w/${ws.slug}/metrics/new`;
  const f = 'metric';
  const quote = state?.form === f ? (state.quote as OpeningQuote | undefined) : undefined;
  const made = state?.done && state.form === 'workspace' ? html`<p class="done" role="status" data-done="workspace">Done: the workspace is created. Add its first metric.</p>` : '';
  const body = !hasCredentials(v)
    ? signInTo(back, 'add a metric')
    : html`<form method="post" action="${back}" id="metric-form">${basics(f, back, state)}<input type="hidden" name="step" value="review">
${field(state, f, 'name', 'Name', { required: true })}
${field(state, f, 'description', 'Description', { textarea: true })}
${field(state, f, 'value', 'Current value', { type: 'number', hint: 'the first reading (optional)' })}
${field(state, f, 'formula', 'Formula', { hint: 'computed from other metrics, e.g. {Revenue} / {Users} (optional)' })}
${field(state, f, 'marketRangeMax', 'Top of the books\u2019 range', { type: 'number', hint: 'optional; the books range from 0 to it (1000 when blank)' })}
${wholeRefusal(state, f, METRIC_FIELDS)}
<p><button type="submit" id="metric-review">Review the cost</button></p></form>
${quote ? html`${costOf(quote, 'the workspace owner')}${quote.refusal ? '' : confirm(f, back, state!, METRIC_FIELDS, 'Create the metric')}` : ''}`;
  return { title: 'New metric', workspace: ws, visitor: v, body: html`<h1>New metric</h1>${made}${body}` };
}

export async function newMetricAct(deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string | { show: unknown }> {
  const slug = workspaceSlug(ctx);
  if (stepOf(values) === 'review') return { show: await apiQuote(deps, v, postMetrics, { body: metricBody(values) }) };
  const m = await apiAct(deps, v, postMetrics, { body: metricBody(values), idempotencyKey: idempotencyKeyOf(values) });
  return backDone(new URLSearchParams(), `/w/${slug}/metrics/${m.id}`, 'metric');
}

// ---- a proposal ----

const PROPOSAL_FIELDS = ['title', 'description', 'metricIds', 'liquidity', 'deadline'] as const;

/** A deadline typed in a datetime-local field has no zone: the form says UTC, so it is read as UTC. */
function deadlineOf(values: URLSearchParams): string | undefined {
  const s = textOf(values, 'deadline')?.trim();
  if (!s) return undefined;
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(s) ? `${s.length === 16 ? `${s}:00` : s}Z` : s;
}

function proposalBody(values: URLSearchParams) {
  const metricIds = values.getAll('metricIds').filter(Boolean);
  return {
    title: values.get('title') ?? '',
    description: textOf(values, 'description'),
    metricIds: metricIds.length ? metricIds : undefined,
    liquidity: numberOf(values, 'liquidity'),
    deadline: deadlineOf(values),
  };
}

export async function newProposalPage(deps: Deps, v: Visitor, state?: FormState): Promise<PageParts> {
  const [ws, metrics] = await Promise.all([workspaceOf(deps, v), apiRead(deps, v, getMetrics)]);
  const back = `/w/${ws.slug}/proposals/new`;
  const f = 'proposal';
  const quote = state?.form === f ? (state.quote as OpeningQuote | undefined) : undefined;
  const chosen = new Set(state?.form === f ? state.values.getAll('metricIds') : []);
  const body = !hasCredentials(v)
    ? signInTo(back, 'propose')
    : html`<form method="post" action="${back}" id="proposal-form">${basics(f, back, state)}<input type="hidden" name="step" value="review">
${field(state, f, 'title', 'Title', { required: true })}
${field(state, f, 'description', 'What would be done, and why', { textarea: true })}
<fieldset><legend>Metrics it is expected to move</legend>${
        metrics.length
          ? metrics.map((m) => html`<label><input type="checkbox" name="metricIds" value="${m.id}"${chosen.has(m.id) ? html` checked` : ''}> ${m.name}</label> `)
          : html`<span class="muted">This workspace has no metric yet.</span>`
      }</fieldset>
${field(state, f, 'liquidity', 'Subsidy per book (credits)', { type: 'number', hint: 'blank: the workspace default' })}
${field(state, f, 'deadline', 'Decision deadline (UTC)', { type: 'datetime-local', hint: 'optional' })}
${wholeRefusal(state, f, PROPOSAL_FIELDS)}
<p><button type="submit" id="proposal-review">Review the subsidy</button></p></form>
${quote ? html`${costOf(quote, 'you')}${quote.refusal ? '' : confirm(f, back, state!, PROPOSAL_FIELDS, 'Propose')}` : ''}
<p class="muted">A proposal opens an approved and a declined book on every metric; the proposer pays their subsidy, shown before anything is created.</p>`;
  return { title: 'New proposal', workspace: ws, visitor: v, body: html`<h1>New proposal</h1>${body}` };
}

export async function newProposalAct(deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string | { show: unknown }> {
  const slug = workspaceSlug(ctx);
  if (stepOf(values) === 'review') return { show: await apiQuote(deps, v, postProposals, { body: proposalBody(values) }) };
  const p = await apiAct(deps, v, postProposals, { body: proposalBody(values), idempotencyKey: idempotencyKeyOf(values) });
  // The route's answer is a proposal, or a quote when the body asks a dry run (this one does not).
  if (!('id' in p)) throw new Error('POST /proposals answered a quote to a body without dryRun');
  return backDone(new URLSearchParams(), `/w/${slug}/proposals/${p.id}`, 'proposal');
}

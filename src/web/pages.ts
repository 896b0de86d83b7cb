import type { Deps } from '../deps';
import { DomainError } from '../errors';
import type { AnswerOf } from './api';
import { apiRead, type Visitor } from './api';
import { align, chart, gapBar, sparkline } from './charts';
import { fmtCredits, fmtDelta, fmtInstant, fmtInstantMs, fmtPercent, fmtValue } from './format';
import { html, type Html } from './html';
import { href, type PageParts } from './layout';
import type { FormState } from './forms';
import { marketActs, positionsHere } from './acts/market';
import { currentOf, joinSection } from './acts/join';
import { proposalActs } from './acts/proposal';
import { settleSection } from './acts/settle';
import { getMetrics, getMetricsById, getPredictionsMarkets, getPredictionsMarketsById, getPredictionsMarketsByIdHistory, getPredictionsMarketsByIdOrderbook, getProposals, getProposalsById, getStatus } from '../api/routes';

type Market = AnswerOf<typeof getPredictionsMarketsById>;
type History = AnswerOf<typeof getPredictionsMarketsByIdHistory>;
type Proposal = AnswerOf<typeof getProposalsById>;

/** Charts are keyed in milliseconds: trades within one second are distinct points. */
const ms = (iso: string) => Date.parse(iso);
/** A calendar date (YYYY-MM-DD, such as a book's resolvesOn) as milliseconds at 00:00 UTC. */
const dateMs = (d: string) => Date.parse(`${d.slice(0, 10)}T00:00:00Z`);

/** A number cell or span: the shown text, and the raw value the API gave (data-value) for tests and scripts. */
function num(field: string, value: number | null, text: string, tag: 'td' | 'span' | 'dd' = 'span'): Html {
  const attr = value === null ? 'null' : String(value);
  if (tag === 'td') return html`<td class="num" data-field="${field}" data-value="${attr}">${text}</td>`;
  if (tag === 'dd') return html`<dd class="num" data-field="${field}" data-value="${attr}">${text}</dd>`;
  return html`<span class="num" data-field="${field}" data-value="${attr}">${text}</span>`;
}

function bookLabel(m: Pick<Market, 'targetDate' | 'title' | 'branch'>): string {
  return `${m.title ?? m.targetDate}${m.branch ? ` (if ${m.branch})` : ''}`;
}

/** Books in the order they resolve (2027-05 before 2027, which resolves in January 2028), then by label. */
const byResolution = (a: { resolvesOn: string; targetDate: string }, b: { resolvesOn: string; targetDate: string }) =>
  a.resolvesOn.localeCompare(b.resolvesOn) || a.targetDate.localeCompare(b.targetDate);
const statusBadge = (s: string) => html`<span class="badge status-${s}">${s}</span>`;

/** Consensus after each trade, from the opening: [t, consensus] points. */
function consensusPoints(h: History): [number, number | null][] {
  const pts: [number, number | null][] = [];
  if (h.opened.consensus !== null) pts.push([ms(h.opened.at), h.opened.consensus]);
  for (const p of h.points) pts.push([ms(p.at), p.consensus]);
  return pts;
}

function historyTable(unit: string | null, rows: { label: string; points: [number, number | null][] }[]): Html {
  return html`<div class="scroll" tabindex="0" role="region" aria-label="History as a table (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">Series</th><th scope="col">Time (UTC)</th><th scope="col">Value</th></tr></thead><tbody>${rows.flatMap((r) =>
    r.points.map((p) => html`<tr><td>${r.label}</td><td>${fmtInstantMs(p[0])}</td><td class="num">${fmtValue(p[1], unit)}</td></tr>`),
  )}</tbody></table></div>`;
}

/** Workspace home: each metric with its value, trend sparkline and the consensus of each horizon's book. */
export async function workspaceHome(deps: Deps, v: Visitor, state?: FormState): Promise<PageParts> {
  const status = await apiRead(deps, v, getStatus, { query: { trends: '1', markets: '1', trendsLimit: '30' } });
  const [metrics, current] = await Promise.all([apiRead(deps, v, getMetrics), currentOf(deps, v)]);
  const unitOf = new Map(metrics.map((m) => [m.id, m.unit]));
  const ws = status.workspace;
  const rows = status.metrics.map((m) => {
    const unit = unitOf.get(m.id) ?? null;
    const books = (m.markets ?? []).slice().sort(byResolution);
    return html`<tr data-metric="${m.id}">
<th scope="row"><a href="${href(v, `/w/${ws.slug}/metrics/${m.id}`)}">${m.name}</a>${m.description ? html`<br><small class="muted">${m.description}</small>` : ''}</th>
${num('value', m.total, fmtValue(m.total, unit), 'td')}
<td>${sparkline(m.trend ?? [], unit)}</td>
<td><ul class="books">${books.length ? books.map((b) => html`<li data-market="${b.id}"><a href="${href(v, `/w/${ws.slug}/markets/${b.id}`)}">${b.targetDate}</a> ${num('consensus', b.prediction, fmtValue(b.prediction, unit))}</li>`) : html`<li class="muted">no open book</li>`}</ul></td>
</tr>`;
  });
  return {
    title: ws.name,
    workspace: ws,
    visitor: v,
    body: html`<h1>${ws.name}</h1>
${ws.description ? html`<p class="lead" data-field="workspaceDescription">${ws.description}</p>` : ''}
<p class="lead">Metrics, their latest value and trend, and what each horizon's book expects.</p>
<div class="scroll" tabindex="0" role="region" aria-label="Metrics (scrolls sideways on a narrow screen)"><table class="metrics"><caption>Metrics</caption>
<thead><tr><th scope="col">Metric</th><th scope="col">Value</th><th scope="col">Trend</th><th scope="col">Books: target date and consensus</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="4" class="muted">No metrics you may read yet.</td></tr>`}</tbody></table></div>
<p><a href="${href(v, `/w/${ws.slug}/proposals`)}">Proposals ranked by impact</a> · <a href="${href(v, `/w/${ws.slug}/track-record`)}">Track record of decisions</a> · <a href="${href(v, `/w/${ws.slug}/metrics/new`)}">Add a metric</a>${current?.capabilities.includes('manage') ? html` · <a href="/w/${ws.slug}/members" id="members-link">Members</a>` : ''}</p>
${joinSection(v, current, `/w/${ws.slug}`, state)}
${await positionsHere(deps, v, ws)}`,
  };
}

/** Metric page: readings over time with each book's consensus history, the term structure of the horizons, and the books that have ended. */
export async function metricPage(deps: Deps, v: Visitor, metricId: string, state?: FormState): Promise<PageParts> {
  const metric = await apiRead(deps, v, getMetricsById, { params: { id: metricId } });
  const [status, markets, ended] = await Promise.all([
    apiRead(deps, v, getStatus, { query: { trends: '1', trendsLimit: '90' } }),
    apiRead(deps, v, getPredictionsMarkets, { query: { metricId: metric.id, limit: '200' } }),
    apiRead(deps, v, getPredictionsMarkets, { query: { metricId: metric.id, status: 'resolved,voided', limit: '200' } }),
  ]);
  const unit = metric.unit;
  const ws = status.workspace;
  const trend = status.metrics.find((m) => m.id === metric.id)?.trend ?? [];
  const books = markets.filter((m) => m.proposalId === null).sort(byResolution);
  // The settle section's read alongside the histories, not after them.
  const [histories, settle] = await Promise.all([
    Promise.all(books.map((b) => apiRead(deps, v, getPredictionsMarketsByIdHistory, { params: { id: b.id } }))),
    settleSection(deps, v, metric.id, ws.slug, markets.filter((m) => !m.resolved && m.status !== 'voided').length, state),
  ]);
  const series = [
    // The trend is [unix seconds, value]: readings are kept to the second.
    { label: 'Readings', points: trend.map(([t, val]) => [t * 1000, val] as [number, number | null]), step: true },
    ...books.map((b, i) => ({ label: `Book ${b.targetDate}`, points: consensusPoints(histories[i]), step: true })),
  ];
  const over = align(series);
  const term = align([{ label: 'Consensus by target date', points: books.map((b) => [dateMs(b.resolvesOn), b.consensus] as [number, number | null]), points_: true }]);
  return {
    title: metric.name,
    workspace: ws,
    visitor: v,
    charts: true,
    body: html`<h1>${metric.name}</h1>
${metric.description ? html`<p class="lead">${metric.description}</p>` : ''}
<dl class="facts" data-metric="${metric.id}">
<div><dt>Value</dt>${num('value', metric.total, fmtValue(metric.total, unit), 'dd')}</div>
<div><dt>Measured</dt><dd data-field="measuredAt" data-value="${metric.measuredAt ?? 'null'}">${fmtInstant(metric.measuredAt)}</dd></div>
${unit ? html`<div><dt>Unit</dt><dd data-field="unit">${unit}</dd></div>` : ''}
<div><dt>Books open</dt><dd>${books.length}</dd></div>
${!metric.isLeaf && metric.formula ? html`<div><dt>Formula</dt><dd><code>${metric.formula}</code></dd></div>` : ''}
</dl>
<p><a href="${href(v, `/w/${ws.slug}/track-record?metric=${encodeURIComponent(metric.id)}`)}">Track record of decisions on ${metric.name}</a></p>
${chart(`${metric.name}: readings and each book's consensus over time`, { ...over, xKind: 'time', yLabel: metric.name, unit }, historyTable(unit, series))}
${chart(`${metric.name}: term structure (consensus by target date)`, { ...term, xKind: 'date', yLabel: metric.name, unit }, html`<p>See the table of books below.</p>`)}
<div class="scroll" tabindex="0" role="region" aria-label="Books (scrolls sideways on a narrow screen)"><table><caption>Books on ${metric.name}</caption>
<thead><tr><th scope="col">Target date</th><th scope="col">Consensus</th><th scope="col">Probability</th><th scope="col">Volume</th><th scope="col">Trades</th><th scope="col">Status</th></tr></thead>
<tbody>${books.map((b) => html`<tr data-market="${b.id}"><th scope="row"><a href="${href(v, `/w/${ws.slug}/markets/${b.id}`)}">${bookLabel(b)}</a></th>${num('consensus', b.consensus, fmtValue(b.consensus, unit), 'td')}${num('probability', b.probability, fmtPercent(b.probability), 'td')}${num('volume', b.volume, fmtCredits(b.volume), 'td')}${num('tradeCount', b.tradeCount, String(b.tradeCount), 'td')}<td>${statusBadge(b.status)}</td></tr>`)}</tbody></table></div>
${endedBooks(v, ws.slug, ended, unit)}
${settle}`,
  };
}

/** How a book ended, in words: early (settled by hand) or on schedule, or voided. */
function howEnded(m: Market): string {
  if (m.status === 'voided') return 'voided, positions refunded';
  return m.settledEarly ? 'early' : 'scheduled';
}

/** Credits one share paid, higher and lower (a voided book refunded instead). */
function payoutText(m: Market): string {
  const p = m.payoutPerShare;
  return p ? `higher ${fmtCredits(p.higher)}, lower ${fmtCredits(p.lower)}` : m.status === 'voided' ? 'refunded at cost' : '—';
}

/** The reason a book ended as it did: the early settlement's or the void's; a scheduled resolution needs none. */
const endReason = (m: Market) => m.settleReason ?? m.voidReason ?? null;

/** The metric's resolved and voided books, newest first: value, when, early or scheduled, why, and what a share paid. */
function endedBooks(v: Visitor, slug: string, ended: Market[], unit: string | null): Html {
  return html`<section aria-labelledby="ended-h"><h2 id="ended-h">Resolved books</h2>${
    ended.length
      ? html`<div class="scroll" tabindex="0" role="region" aria-label="Ended books (scrolls sideways on a narrow screen)"><table class="ended"><thead><tr><th scope="col">Book</th><th scope="col">Resolved value</th><th scope="col">Resolved (UTC)</th><th scope="col">How</th><th scope="col">Reason</th><th scope="col">Payout per share</th></tr></thead><tbody>${ended.map(
          (m) =>
            html`<tr data-ended="${m.id}"><th scope="row"><a href="${href(v, `/w/${slug}/markets/${m.id}`)}">${bookLabel(m)}</a></th>${num('resolvedValue', m.resolvedValue, fmtValue(m.resolvedValue, unit), 'td')}<td data-field="resolvedAt" data-value="${m.resolvedAt ?? 'null'}">${fmtInstant(m.resolvedAt)}</td><td data-field="how">${howEnded(m)}</td><td data-field="reason">${endReason(m) ?? '—'}</td><td data-field="payoutPerShare" data-value="${m.payoutPerShare ? String(m.payoutPerShare.higher) : 'null'}">${payoutText(m)}</td></tr>`,
        )}</tbody></table></div>`
      : html`<p class="muted">No book on this metric has resolved yet.</p>`
  }</section>`;
}

/** Market page: consensus over time, volume, recent trades and the resting-order walls. */
export async function marketPage(deps: Deps, v: Visitor, marketId: string, state?: FormState): Promise<PageParts> {
  const [market, history, book, metrics] = await Promise.all([
    apiRead(deps, v, getPredictionsMarketsById, { params: { id: marketId } }),
    apiRead(deps, v, getPredictionsMarketsByIdHistory, { params: { id: marketId }, query: { limit: '500' } }),
    apiRead(deps, v, getPredictionsMarketsByIdOrderbook, { params: { id: marketId } }),
    apiRead(deps, v, getMetrics),
  ]);
  const [ws, proposal] = await Promise.all([
    workspaceOf(deps, v),
    // A proposal this visitor may not read leaves the book's page without the link, not refused.
    market.proposalId
      ? apiRead(deps, v, getProposalsById, { params: { id: market.proposalId } }).catch((err: unknown) => {
          if (err instanceof DomainError) return null;
          throw err;
        })
      : Promise.resolve(null),
  ]);
  const unit = metrics.find((m) => m.id === market.metricId)?.unit ?? null;
  // A branch book's other branch on the same metric and date.
  const sibling = proposal?.conditionalMarkets.find((c) => c.metricId === market.metricId && c.targetDate === market.targetDate && c.branch !== market.branch) ?? null;
  const points = consensusPoints(history);
  const data = align([{ label: 'Consensus', points, step: true }]);
  const recent = history.points.slice(-20).reverse();
  const maxShares = Math.max(1, ...book.higher.map((l) => l.shares), ...book.lower.map((l) => l.shares));
  const wall = (side: 'higher' | 'lower', levels: AnswerOf<typeof getPredictionsMarketsByIdOrderbook>['higher']) =>
    html`<section class="wall ${side}" aria-labelledby="wall-${side}"><h3 id="wall-${side}">Buy ${side}</h3>${
      levels.length
        ? html`<table><thead><tr><th scope="col">Limit</th><th scope="col">Shares</th><th scope="col">Orders</th></tr></thead><tbody>${levels.map(
            (l) =>
              html`<tr data-level="${side}:${l.limit}"><td class="num">${fmtValue(l.limit, unit)}</td><td class="num bar" style="--w:${((l.shares / maxShares) * 100).toFixed(1)}%" data-field="shares" data-value="${l.shares}">${fmtValue(l.shares)}</td><td class="num">${l.orders}</td></tr>`,
          )}</tbody></table>`
        : html`<p class="muted">No resting orders.</p>`
    }</section>`;
  return {
    title: `${market.metricName} ${bookLabel(market)}`,
    workspace: ws,
    visitor: v,
    charts: true,
    body: html`<p class="crumbs"><a href="${href(v, `/w/${ws.slug}/metrics/${market.metricId}`)}">${market.metricName}</a>${
      proposal
        ? html` · <a data-field="proposalLink" href="${href(v, `/w/${ws.slug}/proposals/${proposal.id}`)}">Proposal: ${proposal.title}</a>`
        : ''
    }</p>
<h1>${market.metricName}: ${bookLabel(market)} ${statusBadge(market.status)}</h1>
${
  proposal && market.branch
    ? html`<p class="lead" data-field="branch" data-value="${market.branch}">The branch where <a href="${href(v, `/w/${ws.slug}/proposals/${proposal.id}`)}">${proposal.title}</a> is ${market.branch}: it pays only if the proposal is ${market.branch}, and is voided (refunded) otherwise.${
        sibling ? html` The other branch: <a data-field="siblingLink" href="${href(v, `/w/${ws.slug}/markets/${sibling.id}`)}">if ${sibling.branch}</a>.` : ''
      }</p>`
    : ''
}
${resolution(market, unit)}
<dl class="facts" data-market="${market.id}">
<div><dt>Consensus</dt>${num('consensus', market.consensus, fmtValue(market.consensus, unit), 'dd')}</div>
<div><dt>Probability higher</dt>${num('probability', market.probability, fmtPercent(market.probability), 'dd')}</div>
<div><dt>Volume</dt>${num('volume', market.volume, fmtCredits(market.volume), 'dd')}</div>
<div><dt>Trades</dt>${num('tradeCount', market.tradeCount, String(market.tradeCount), 'dd')}</div>
<div><dt>Liquidity</dt>${num('liquidity', market.liquidity, fmtCredits(market.liquidity), 'dd')}</div>
<div><dt>Range</dt><dd>${fmtValue(market.rangeMin, unit)} to ${fmtValue(market.rangeMax, unit)}</dd></div>
<div><dt>Resolves on</dt><dd>${market.resolvesOn}</dd></div>
</dl>
${await marketActs(deps, v, market, ws.slug, unit, state)}
${chart('Consensus over time', { ...data, xKind: 'time', yLabel: market.metricName, unit }, historyTable(unit, [{ label: 'Consensus', points }]))}
<div class="cols">
<section aria-labelledby="trades-h"><h2 id="trades-h">Recent trades</h2>${
      recent.length
        ? html`<div class="scroll" tabindex="0" role="region" aria-label="Trades (scrolls sideways on a narrow screen)"><table class="trades"><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Trade</th><th scope="col">Consensus after</th></tr></thead><tbody>${recent.map(
            (p) => html`<tr data-trade="${p.tradeId}"><td>${fmtInstantMs(ms(p.at))}</td><td>${p.kind} ${p.direction}</td>${num('consensus', p.consensus, fmtValue(p.consensus, unit), 'td')}</tr>`,
          )}</tbody></table></div>`
        : html`<p class="muted">No trades yet.</p>`
    }</section>
<section aria-labelledby="walls-h"><h2 id="walls-h">Resting orders</h2><div class="walls">${wall('higher', book.higher)}${wall('lower', book.lower)}</div></section>
</div>`,
  };
}

/** How an ended book ended: the value, when, early or scheduled, why, and what one share paid. */
function resolution(m: Market, unit: string | null): Html {
  if (m.status !== 'resolved' && m.status !== 'voided') return html``;
  const reason = endReason(m);
  return html`<section aria-labelledby="resolution-h" class="resolution"><h2 id="resolution-h">${m.status === 'resolved' ? 'Resolved' : 'Voided'}</h2>
<dl class="facts" data-resolution="${m.id}">
${m.status === 'resolved' ? html`<div><dt>Resolved value</dt>${num('resolvedValue', m.resolvedValue, fmtValue(m.resolvedValue, unit), 'dd')}</div>` : ''}
<div><dt>${m.status === 'resolved' ? 'Resolved' : 'Voided'} at</dt><dd data-field="resolvedAt" data-value="${m.resolvedAt ?? 'null'}">${fmtInstant(m.resolvedAt)}</dd></div>
<div><dt>How</dt><dd data-field="how">${howEnded(m)}</dd></div>
${reason ? html`<div><dt>Reason</dt><dd data-field="reason">${reason}</dd></div>` : ''}
${
  m.payoutPerShare
    ? html`<div><dt>Higher share paid</dt>${num('payoutHigher', m.payoutPerShare.higher, fmtCredits(m.payoutPerShare.higher), 'dd')}</div><div><dt>Lower share paid</dt>${num('payoutLower', m.payoutPerShare.lower, fmtCredits(m.payoutPerShare.lower), 'dd')}</div>`
    : ''
}
</dl></section>`;
}

/** The workspace's slug and name as the API shows them to this visitor. */
async function workspaceOf(deps: Deps, v: Visitor): Promise<{ slug: string; name: string }> {
  return (await apiRead(deps, v, getStatus)).workspace;
}

function rangeOf(p: Proposal, marketId: string | undefined): { min: number; max: number } | null {
  const m = p.conditionalMarkets.find((c) => c.id === marketId);
  return m ? { min: m.rangeMin, max: m.rangeMax } : null;
}

type Units = Map<string, string | null>;

/** Each readable metric's unit, to show a proposal's figures in it. */
async function unitsOf(deps: Deps, v: Visitor): Promise<Units> {
  return new Map((await apiRead(deps, v, getMetrics)).map((m) => [m.id, m.unit]));
}

function impactRows(p: Proposal, units: Units): Html[] {
  return p.impact.map((i) => {
    const a = i.approved?.consensus ?? null;
    const d = i.declined?.consensus ?? null;
    // A branch whose book is not open yet has no range here: centre what there is.
    const top = Math.max(Math.abs(a ?? 0), Math.abs(d ?? 0)) || 1;
    const range = rangeOf(p, i.approved?.marketId) ?? rangeOf(p, i.declined?.marketId) ?? { min: Math.min(0, a ?? 0, d ?? 0), max: 2 * top };
    const unit = units.get(i.metricId) ?? null;
    return html`<tr data-impact="${i.metricId}:${i.targetDate}"><th scope="row">${i.metricName}<br><small class="muted">${i.targetDate}${i.expected ? ' · named by the proposal' : ''}</small></th>${num('approved', a, fmtValue(a, unit), 'td')}${num('declined', d, fmtValue(d, unit), 'td')}${num('impact', i.impact, fmtDelta(i.impact, unit), 'td')}<td class="gapcell">${gapBar(range, a, d, unit)}</td></tr>`;
  });
}

const impactHead = html`<thead><tr><th scope="col">Metric, date</th><th scope="col">If approved</th><th scope="col">If declined</th><th scope="col">Gap</th><th scope="col">Drawn on the book's range</th></tr></thead>`;

/** Proposals ranked by impact, with the approved-vs-declined gap per metric drawn. */
export async function proposalsPage(deps: Deps, v: Visitor): Promise<PageParts> {
  const [ws, proposals, units] = await Promise.all([workspaceOf(deps, v), apiRead(deps, v, getProposals, { query: { sort: 'impact', limit: '50' } }), unitsOf(deps, v)]);
  return {
    title: 'Proposals',
    workspace: ws,
    visitor: v,
    body: html`<h1>Proposals by impact</h1>
<p class="lead">Largest expected difference first: what the books expect if a proposal is approved versus declined.</p>
<p><a href="${href(v, `/w/${ws.slug}/proposals/new`)}">Propose</a></p>
${
  proposals.length
    ? html`<ol class="proposals">${proposals.map(
        (p) => html`<li data-proposal="${p.id}"><article>
<h2><a href="${href(v, `/w/${ws.slug}/proposals/${p.id}`)}">${p.title}</a> ${statusBadge(p.status)}</h2>
<p>Headline gap ${num('headlineImpact', p.headlineImpact, fmtDelta(p.headlineImpact, units.get(p.headline?.metricId ?? '') ?? null))}${p.proposedByNickname ? html` · proposed by ${p.proposedByNickname}` : ''} · ${fmtInstant(p.createdAt)}</p>
<div class="scroll" tabindex="0" role="region" aria-label="Impact of ${p.title} by metric (scrolls sideways on a narrow screen)"><table class="impact">${impactHead}<tbody>${impactRows(p, units)}</tbody></table></div>
</article></li>`,
      )}</ol>`
    : html`<p class="muted">No proposals yet.</p>`
}`,
  };
}

/** Each metric and date of the proposal with a link to both branches' books and how each stands. */
function branchBooks(v: Visitor, slug: string, p: Proposal): Html {
  const byId = new Map(p.conditionalMarkets.map((m) => [m.id, m]));
  const cell = (branch: 'approved' | 'declined', id: string | undefined) => {
    const m = id ? byId.get(id) : undefined;
    return m
      ? html`<td data-branch-book="${branch}" data-market="${m.id}"><a href="${href(v, `/w/${slug}/markets/${m.id}`)}">If ${branch}</a> ${statusBadge(m.status)}</td>`
      : html`<td data-branch-book="${branch}" class="muted">not open</td>`;
  };
  return html`<section aria-labelledby="books-h"><h2 id="books-h">Branch books</h2>${
    p.impact.length
      ? html`<div class="scroll" tabindex="0" role="region" aria-label="Branch books (scrolls sideways on a narrow screen)"><table class="branches"><thead><tr><th scope="col">Metric, date</th><th scope="col">If approved</th><th scope="col">If declined</th></tr></thead><tbody>${p.impact.map(
          (i) => html`<tr data-books="${i.metricId}:${i.targetDate}"><th scope="row">${i.metricName} ${i.targetDate}</th>${cell('approved', i.approved?.marketId)}${cell('declined', i.declined?.marketId)}</tr>`,
        )}</tbody></table></div>`
      : html`<p class="muted">No branch book is open.</p>`
  }</section>`;
}

/** Proposal page: both branches' history side by side, the decision and its scorecard. */
export async function proposalPage(deps: Deps, v: Visitor, proposalId: string, state?: FormState): Promise<PageParts> {
  const [ws, p, units] = await Promise.all([workspaceOf(deps, v), apiRead(deps, v, getProposalsById, { params: { id: proposalId } }), unitsOf(deps, v)]);
  const historyOf = (id: string | undefined) => (id ? apiRead(deps, v, getPredictionsMarketsByIdHistory, { params: { id } }) : Promise.resolve(null));
  // The acting part's reads alongside the charts' histories, not after them.
  const acting = proposalActs(deps, v, p, ws.slug, state);
  const charts = Promise.all(
    p.impact.map(async (i) => {
      const [a, d] = await Promise.all([historyOf(i.approved?.marketId), historyOf(i.declined?.marketId)]);
      const series = [
        { label: 'If approved', points: a ? consensusPoints(a) : [], step: true },
        { label: 'If declined', points: d ? consensusPoints(d) : [], step: true },
      ];
      const unit = units.get(i.metricId) ?? null;
      return chart(`${i.metricName} on ${i.targetDate}: both branches over time`, { ...align(series), xKind: 'time', yLabel: i.metricName, unit }, historyTable(unit, series));
    }),
  );
  const [drawn, acts] = await Promise.all([charts, acting]);
  const decision =
    p.status === 'pending'
      ? html`<p>Pending${p.deadline ? html`: decision due ${fmtInstant(p.deadline)}${p.deadlinePassed ? ' (deadline passed)' : ''}` : ''}.</p>`
      : html`<p data-field="decision">${p.status === 'withdrawn' ? 'Withdrawn' : p.status === 'approved' ? 'Approved' : 'Declined'}${p.spam ? ' as spam' : ''} ${fmtInstant(p.decidedAt)}.</p>`;
  return {
    title: p.title,
    workspace: ws,
    visitor: v,
    charts: true,
    body: html`<p class="crumbs"><a href="${href(v, `/w/${ws.slug}/proposals`)}">Proposals</a></p>
<h1>${p.title} ${statusBadge(p.status)}</h1>
${p.description ? html`<p class="lead">${p.description}</p>` : ''}
<dl class="facts" data-proposal="${p.id}">
<div><dt>Headline gap</dt>${num('headlineImpact', p.headlineImpact, fmtDelta(p.headlineImpact, units.get(p.headline?.metricId ?? '') ?? null), 'dd')}</div>
<div><dt>Proposed by</dt><dd>${p.proposedByNickname ?? '—'}</dd></div>
<div><dt>Books</dt><dd>${p.conditionalMarketCount}</dd></div>
<div><dt>Subsidy</dt><dd>${fmtCredits(p.liquiditySubsidy)}</dd></div>
</dl>
<section aria-labelledby="decision-h"><h2 id="decision-h">Decision</h2>${decision}</section>
${acts}
<section aria-labelledby="impact-h"><h2 id="impact-h">Approved versus declined</h2>
<div class="scroll" tabindex="0" role="region" aria-label="Approved versus declined (scrolls sideways on a narrow screen)"><table class="impact">${impactHead}<tbody>${impactRows(p, units)}</tbody></table></div>
<div class="cols">${drawn}</div></section>
${branchBooks(v, ws.slug, p)}
<section aria-labelledby="score-h"><h2 id="score-h">Scorecard</h2>${
      p.scorecard.length
        ? html`<div class="scroll" tabindex="0" role="region" aria-label="Scorecard (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">Metric, date</th><th scope="col">Branch</th><th scope="col">Taken</th><th scope="col">Predicted</th><th scope="col">Realised</th><th scope="col">Error</th></tr></thead><tbody>${p.scorecard.map(
            (s) =>
              html`<tr><th scope="row">${s.metricName} ${s.targetDate}</th><td>${s.branch}</td><td>${s.taken === null ? '—' : s.taken ? 'yes' : 'no'}</td>${num('predicted', s.predicted, fmtValue(s.predicted, units.get(s.metricId) ?? null), 'td')}${num('realised', s.realisedValue, fmtValue(s.realisedValue, units.get(s.metricId) ?? null), 'td')}${num('error', s.error, fmtDelta(s.error, units.get(s.metricId) ?? null), 'td')}</tr>`,
          )}</tbody></table></div>`
        : html`<p class="muted">No branch book has resolved yet: the scorecard fills in as they do.</p>`
    }</section>`,
  };
}

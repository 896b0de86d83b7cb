import type { Deps } from '../deps';
import type { AnswerOf } from './api';
import { apiRead, type Visitor } from './api';
import { align, chart } from './charts';
import { fmtDelta, fmtInstant, fmtPercent, fmtValue } from './format';
import { html, type Html } from './html';
import { href, type PageParts } from './layout';
import { getMetrics, getStatus, getTrackRecord } from '../api/routes';

type Record_ = AnswerOf<typeof getTrackRecord>;
type Rate = Record_['summary']['market']['hitRate'];

const RULE_NAMES: Record<string, string> = { persistence: 'Persistence (last reading)', averageChange: 'Average change', alwaysApprove: 'Always approve' };

/** A figure with the raw value the API gave (data-value), for tests and scripts. */
function cell(field: string, value: number | null, text: string): Html {
  return html`<td class="num" data-field="${field}" data-value="${value === null ? 'null' : String(value)}">${text}</td>`;
}
const rateText = (r: Rate | null) => (r === null ? 'not scored' : r.scored ? `${fmtPercent(r.rate)} (${r.hits} of ${r.scored})` : '—');
const pct = (x: number | null) => (x === null ? null : Math.round(x * 10_000) / 100);

/**
 * The workspace's track record (issue 68): every figure is GET /api/track-record's for this visitor,
 * so a metric hidden from them is absent here too.
 */
export async function trackRecordPage(deps: Deps, v: Visitor, query: { metric?: string; cursor?: string; asOf?: string }): Promise<PageParts> {
  const q: Record<string, string> = { limit: '50' };
  if (query.metric) q.metricId = query.metric;
  if (query.cursor) q.cursor = query.cursor;
  if (query.asOf) q.asOf = query.asOf;
  const [r, status, metrics] = await Promise.all([
    apiRead(deps, v, getTrackRecord, { query: q }),
    apiRead(deps, v, getStatus),
    apiRead(deps, v, getMetrics),
  ]);
  const ws = status.workspace;
  const base = `/w/${ws.slug}/track-record`;
  const withMetric = (id: string | null, extra = '') => href(v, `${base}${id ? `?metric=${encodeURIComponent(id)}${extra ? `&${extra}` : ''}` : extra ? `?${extra}` : ''}`);
  const s = r.summary;
  const title = r.metric ? `Track record: ${r.metric.name}` : 'Track record';
  const month = r.periodKind === 'month';
  const xOf = (p: Record_['periods'][number], i: number) => (month ? Date.parse(`${p.label}-01T00:00:00Z`) : i + 1);
  const series = (label: string, pick: (p: Record_['periods'][number]) => number | null) => ({ label, points: r.periods.map((p, i) => [xOf(p, i), pick(p)] as [number, number | null]), points_: true });
  const xAxis = month ? { xKind: 'time' as const } : { xKind: 'number' as const, xLabel: 'Period (runs of decisions)' };
  const hitChart = align([series('Hit rate in the period', (p) => pct(p.hitRate.rate)), series('Hit rate to date', (p) => pct(p.toDate.hitRate.rate)), series("Traders' calibration", (p) => pct(p.calibration))]);
  const errChart = align([
    series('Market', (p) => pct(p.marketError)),
    series('Persistence', (p) => pct(p.persistenceError)),
    series('Average change', (p) => pct(p.averageChangeError)),
  ]);
  const bins = r.calibration.bins.filter((b) => b.meanForecast !== null && b.meanOutcome !== null);
  const calib = align([
    { label: 'Observed', points: bins.map((b) => [b.meanForecast!, b.meanOutcome] as [number, number | null]), points_: true },
    { label: 'Perfectly calibrated', points: [[0, 0], [1, 1]] },
  ]);
  const periodRows = r.periods.map(
    (p) => html`<tr data-period="${p.label}"><th scope="row">${p.label}</th><td class="num">${p.decisions}</td><td class="num">${p.realised}</td>${cell('periodHitRate', p.hitRate.rate, rateText(p.hitRate))}${cell('periodMarketError', p.marketError, fmtPercent(p.marketError))}${cell('periodPersistenceError', p.persistenceError, fmtPercent(p.persistenceError))}${cell('periodAverageChangeError', p.averageChangeError, fmtPercent(p.averageChangeError))}${cell('periodCalibration', p.calibration, fmtPercent(p.calibration))}${cell('toDateHitRate', p.toDate.hitRate.rate, rateText(p.toDate.hitRate))}</tr>`,
  );
  const periodTable = html`<div class="scroll" tabindex="0" role="region" aria-label="By period (scrolls sideways on a narrow screen)"><table><caption>By period</caption><thead><tr><th scope="col">Period</th><th scope="col">Decisions</th><th scope="col">Realised</th><th scope="col">Hit rate</th><th scope="col">Market error</th><th scope="col">Persistence error</th><th scope="col">Average-change error</th><th scope="col">Calibration</th><th scope="col">Hit rate to date</th></tr></thead><tbody>${periodRows.length ? periodRows : html`<tr><td colspan="9" class="muted">No decisions yet.</td></tr>`}</tbody></table></div>`;
  const ruleRows = s.rules.map(
    (x) => html`<tr data-rule="${x.rule}"><th scope="row">${RULE_NAMES[x.rule]}</th>${cell('decisions', x.decisions, String(x.decisions))}${cell('meanError', x.meanError, fmtPercent(x.meanError))}${cell('marketMeanError', x.marketMeanError, fmtPercent(x.marketMeanError))}${cell('marketBetterBy', x.marketBetterBy, x.marketBetterBy === null ? '—' : `${x.marketBetterBy > 0 ? '+' : ''}${fmtPercent(x.marketBetterBy)}`)}${cell('marketCloser', x.marketCloser, `${x.marketCloser} of ${x.decisions}`)}${cell('hitRate', x.hitRate?.rate ?? null, rateText(x.hitRate))}${cell('unobservable', x.unobservable, String(x.unobservable))}</tr>`,
  );
  const entryRows = r.entries.map(
    (e) => html`<tr data-proposal="${e.proposalId}" data-metric="${e.metricId}" data-target="${e.targetDate}">
<th scope="row"><a href="${href(v, `/w/${ws.slug}/proposals/${e.proposalId}`)}">${e.proposalTitle}</a><br><small class="muted">${e.metricName} · ${e.targetDate} · ${fmtInstant(e.decidedAt)}</small></th>
<td data-field="decision">${e.decision}${e.followedAdvice === false ? html` <span class="badge" data-field="againstAdvice">against the market</span>` : ''}</td>
${cell('approvedConsensus', e.approvedConsensus, fmtValue(e.approvedConsensus, e.unit))}
${cell('declinedConsensus', e.declinedConsensus, fmtValue(e.declinedConsensus, e.unit))}
${cell('lastReading', e.lastReading, fmtValue(e.lastReading, e.unit))}
<td data-field="status"><span class="badge status-${e.status}">${e.status}</span></td>
${cell('realisedValue', e.realisedValue, e.status === 'realised' ? fmtValue(e.realisedValue, e.unit) : e.status === 'voided' ? 'voided: nothing realised' : 'not yet realised')}
${cell('error', e.error, fmtDelta(e.error, e.unit))}
${cell('persistenceError', e.persistenceError, fmtDelta(e.persistenceError, e.unit))}
<td data-field="directionHeld">${e.directionHeld === null ? '—' : e.directionHeld ? 'held' : 'missed'}</td>
</tr>`,
  );
  const metricLinks = metrics.map((m) => (m.id === r.metric?.id ? html`<strong>${m.name}</strong>` : html`<a href="${withMetric(m.id)}">${m.name}</a>`));
  const csv = href(v, `/w/${ws.slug}/track-record.csv${r.metric ? `?metric=${encodeURIComponent(r.metric.id)}` : ''}`);
  return {
    title,
    workspace: ws,
    visitor: v,
    charts: true,
    body: html`<h1>${title}</h1>
<p class="lead">Since this workspace started deciding with its markets: how often the decisions' forecasts were right, by how much, and whether it is getting better, beside simple rules computed from the same data. As of ${fmtInstant(r.asOf)}.</p>
<p class="note" data-field="unobservable"><strong>What cannot be seen:</strong> ${r.definitions.unobservable}</p>
<p>Metric: ${r.metric ? html`<a href="${withMetric(null)}">All metrics</a>` : html`<strong>All metrics</strong>`}${metricLinks.map((l) => html` · ${l}`)} · <a href="${csv}" download>Download CSV</a></p>
<dl class="facts" data-record="${r.metric?.id ?? 'all'}">
<div><dt>Decisions</dt><dd data-field="decisions" data-value="${String(s.decisions)}">${s.decisions}</dd></div>
<div><dt>Realised</dt><dd data-field="realised" data-value="${String(s.realised)}">${s.realised}</dd></div>
<div><dt>Not yet realised</dt><dd data-field="pending" data-value="${String(s.pending)}">${s.pending}</dd></div>
<div><dt>Voided</dt><dd data-field="voided" data-value="${String(s.voided)}">${s.voided}</dd></div>
<div><dt>Direction held</dt><dd class="num" data-field="hitRate" data-value="${String(s.market.hitRate.rate)}">${rateText(s.market.hitRate)}</dd></div>
<div><dt>Market error</dt><dd class="num" data-field="marketError" data-value="${String(s.market.meanError)}">${fmtPercent(s.market.meanError)} of the range</dd></div>
<div><dt>Traders' calibration</dt><dd class="num" data-field="calibration" data-value="${String(r.calibration.score)}">${fmtPercent(r.calibration.score)}</dd></div>
<div><dt>Against the market's advice</dt><dd data-field="againstAdvice" data-value="${String(s.advice.against.decisions)}">${s.advice.against.decisions} (hit rate ${rateText(s.advice.against.hitRate)})</dd></div>
</dl>
<div class="scroll" tabindex="0" role="region" aria-label="The market against simple rules (scrolls sideways on a narrow screen)"><table class="rules"><caption>The market against simple rules (errors as a share of each book's range, on the same realised decisions)</caption>
<thead><tr><th scope="col">Rule</th><th scope="col">Decisions</th><th scope="col">Rule's error</th><th scope="col">Market's error</th><th scope="col">Market better by</th><th scope="col">Market closer</th><th scope="col">Rule's hit rate</th><th scope="col">Unobservable</th></tr></thead>
<tbody><tr data-rule="market"><th scope="row">The market</th>${cell('decisions', s.market.decisions, String(s.market.decisions))}${cell('meanError', s.market.meanError, fmtPercent(s.market.meanError))}<td>—</td><td>—</td><td>—</td>${cell('hitRate', s.market.hitRate.rate, rateText(s.market.hitRate))}<td class="num">0</td></tr>${ruleRows}</tbody></table></div>
<ul class="muted">${(['forecast', 'direction', 'persistence', 'averageChange', 'alwaysApprove', 'advice', 'calibration', 'periods'] as const).map((k) => html`<li>${r.definitions[k]}</li>`)}</ul>
${chart(`Hit rate and traders' calibration by ${month ? 'month' : 'run of decisions'} (%)`, { ...hitChart, ...xAxis, yLabel: 'Percent', unit: '%' }, periodTable)}
${chart(`Forecast error by ${month ? 'month' : 'run of decisions'} (% of the range)`, { ...errChart, ...xAxis, yLabel: 'Error', unit: '%' }, periodTable)}
${
  bins.length
    ? chart(
        "Traders' calibration: the decided books' forecast against where the reading landed",
        { ...calib, xKind: 'number', xLabel: 'Forecast position in the range', yLabel: 'Realised position', unit: null },
        html`<div class="scroll"><table><thead><tr><th scope="col">Bin</th><th scope="col">Decisions</th><th scope="col">Mean forecast</th><th scope="col">Mean outcome</th></tr></thead><tbody>${bins.map((b) => html`<tr><td>${b.bin}</td><td class="num">${b.forecasts}</td><td class="num">${fmtPercent(b.meanForecast)}</td><td class="num">${fmtPercent(b.meanOutcome)}</td></tr>`)}</tbody></table></div>`,
      )
    : html`<p class="muted">The calibration diagram appears once decided books have realised.</p>`
}
<div class="scroll" tabindex="0" role="region" aria-label="Decisions (scrolls sideways on a narrow screen)"><table class="record"><caption>Decisions, newest first (${r.total} in all)</caption>
<thead><tr><th scope="col">Proposal, metric, target date, decided</th><th scope="col">Decision</th><th scope="col">If approved</th><th scope="col">If declined</th><th scope="col">Last reading</th><th scope="col">Status</th><th scope="col">Realised (decided branch)</th><th scope="col">Error</th><th scope="col">Persistence error</th><th scope="col">Direction</th></tr></thead>
<tbody>${entryRows.length ? entryRows : html`<tr><td colspan="10" class="muted">No decided proposal yet.</td></tr>`}</tbody></table></div>
${r.nextCursor ? html`<p><a rel="next" href="${withMetric(r.metric?.id ?? null, `cursor=${encodeURIComponent(r.nextCursor)}`)}">Older decisions</a></p>` : ''}`,
  };
}

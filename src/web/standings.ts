import type { z } from 'zod';
import type { Deps } from '../deps';
import type { leaderboardSchema, publicProfileSchema } from '../api/schemas/standings';
import { apiGet, type Visitor } from './api';
import { align, chart } from './charts';
import { fmtCredits, fmtInstant, fmtPercent, fmtValue } from './format';
import { html, type Html } from './html';
import type { PageParts } from './layout';

/** The site-wide pages of the standings (issue 23's API): the public leaderboard and a participant's public profile. */
type Leaderboard = z.infer<typeof leaderboardSchema>;
type Profile = z.infer<typeof publicProfileSchema>;

const SORTS = ['earnings', 'calibration', 'accuracy', 'volume'] as const;
const secs = (iso: string) => Math.floor(Date.parse(iso) / 1000);

function num(field: string, value: number | null, text: string, tag: 'td' | 'dd' = 'td'): Html {
  const attr = value === null ? 'null' : String(value);
  return tag === 'td' ? html`<td class="num" data-field="${field}" data-value="${attr}">${text}</td>` : html`<dd class="num" data-field="${field}" data-value="${attr}">${text}</dd>`;
}

const score = (v: number | null) => (v === null ? '—' : v.toFixed(3));

/** The public leaderboard: ?sort= (earnings, calibration, accuracy, volume) and ?min= (resolved books needed) go to the API as they are. */
export async function leaderboardPage(deps: Deps, v: Visitor, q: { sort?: string; min?: string }): Promise<PageParts> {
  const query: Record<string, string> = {};
  if (q.sort) query.sort = q.sort;
  if (q.min) query.minResolvedMarkets = q.min;
  const board = await apiGet<Leaderboard>(deps, v, '/leaderboard', { query });
  const link = (sort: string) => `/leaderboard?sort=${sort}${q.min ? `&min=${encodeURIComponent(q.min)}` : ''}`;
  return {
    title: 'Leaderboard',
    visitor: v,
    body: html`<h1>Leaderboard</h1>
<p class="lead">Standings over public workspaces${board.season ? html`, season ${board.season.name}` : ''}; at least ${board.minResolvedMarkets} resolved book${board.minResolvedMarkets === 1 ? '' : 's'}.</p>
<nav aria-label="Sort by" class="sorts">Sort by: ${SORTS.map((s) => (s === board.sort ? html`<strong aria-current="page">${s}</strong> ` : html`<a href="${link(s)}">${s}</a> `))}</nav>
<div class="scroll" tabindex="0" role="region" aria-label="Leaderboard (scrolls sideways on a narrow screen)"><table class="board"><caption>${board.total} participant${board.total === 1 ? '' : 's'}</caption>
<thead><tr><th scope="col">Rank</th><th scope="col">Participant</th><th scope="col">Earnings</th><th scope="col">Calibration</th><th scope="col">Accuracy</th><th scope="col">Volume</th><th scope="col">Resolved</th><th scope="col">Trades</th></tr></thead>
<tbody>${
      board.rows.length
        ? board.rows.map(
            (r) =>
              html`<tr data-agent="${r.agent.id}"><td class="num">${r.rank}</td><th scope="row"><a href="/participants/${encodeURIComponent(r.agent.id)}">${r.agent.nickname}</a>${r.bot ? html` <span class="badge">bot</span>` : ''}</th>${num('earnings', r.earnings, fmtCredits(r.earnings))}${num('calibration', r.calibration, score(r.calibration))}${num('accuracy', r.accuracy, score(r.accuracy))}${num('volume', r.volume, fmtCredits(r.volume))}${num('resolvedMarkets', r.resolvedMarkets, String(r.resolvedMarkets))}${num('trades', r.trades, String(r.trades))}</tr>`,
          )
        : html`<tr><td colspan="8" class="muted">Nobody qualifies yet.</td></tr>`
    }</tbody></table></div>`,
  };
}

/** A participant's public profile: balance and P&L over time, the calibration diagram, positions and trades. */
export async function profilePage(deps: Deps, v: Visitor, id: string): Promise<PageParts> {
  const p = await apiGet<Profile>(deps, v, '/agents/:id/public', { params: { id } });
  const balance = p.balanceHistory.map((b) => [secs(b.at), b.balance] as [number, number | null]);
  const pnl = p.pnlHistory.map((b) => [secs(b.at), b.cumulative] as [number, number | null]);
  const bins = p.stats.calibrationBins.filter((b) => b.meanForecast !== null && b.meanOutcome !== null);
  const calibration = align([
    { label: 'Observed', points: bins.map((b) => [b.meanForecast!, b.meanOutcome] as [number, number | null]), points_: true },
    { label: 'Perfectly calibrated', points: [[0, 0], [1, 1]] },
  ]);
  const tableOf = (label: string, pts: [number, number | null][]) =>
    html`<div class="scroll"><table><thead><tr><th scope="col">Time (UTC)</th><th scope="col">${label}</th></tr></thead><tbody>${pts.map((x) => html`<tr><td>${fmtInstant(new Date(x[0] * 1000).toISOString())}</td><td class="num">${fmtCredits(x[1])}</td></tr>`)}</tbody></table></div>`;
  const s = p.stats;
  return {
    title: p.nickname,
    visitor: v,
    charts: true,
    body: html`<h1>${p.nickname}${p.bot ? html` <span class="badge">bot</span>` : ''}</h1>
${p.bio ? html`<p class="lead">${p.bio}</p>` : ''}
<dl class="facts" data-agent="${p.id}">
<div><dt>Balance</dt>${num('balance', p.balance, fmtCredits(p.balance), 'dd')}</div>
<div><dt>Rank</dt>${num('rank', s.rank, s.rank === null ? '—' : String(s.rank), 'dd')}</div>
<div><dt>Settled earnings</dt>${num('settledEarnings', s.settledEarnings, fmtCredits(s.settledEarnings), 'dd')}</div>
<div><dt>Open earnings</dt>${num('openEarnings', s.openEarnings, fmtCredits(s.openEarnings), 'dd')}</div>
<div><dt>Calibration</dt>${num('calibration', s.calibration, score(s.calibration), 'dd')}</div>
<div><dt>Accuracy</dt>${num('accuracy', s.accuracy, score(s.accuracy), 'dd')}</div>
<div><dt>Trades</dt>${num('totalTrades', s.totalTrades, String(s.totalTrades), 'dd')}</div>
<div><dt>Volume</dt>${num('tradedVolume', s.tradedVolume, fmtCredits(s.tradedVolume), 'dd')}</div>
</dl>
<div class="cols">
${chart('Balance over time', { ...align([{ label: 'Balance', points: balance, step: true }]), xKind: 'time', unit: 'cr' }, tableOf('Balance', balance))}
${chart('Profit and loss over time (cumulative)', { ...align([{ label: 'P&L', points: pnl, step: true }]), xKind: 'time', unit: 'cr' }, tableOf('P&L', pnl))}
</div>
${
  bins.length
    ? chart(
        'Calibration: how often the outcome came out higher, against the forecast',
        { ...calibration, xKind: 'number', xLabel: 'Forecast', unit: null },
        html`<div class="scroll"><table><thead><tr><th scope="col">Forecast bin</th><th scope="col">Trades</th><th scope="col">Mean forecast</th><th scope="col">Observed</th></tr></thead><tbody>${bins.map((b) => html`<tr><td>${fmtPercent(b.from)} to ${fmtPercent(b.to)}</td><td class="num">${b.trades}</td><td class="num">${fmtPercent(b.meanForecast)}</td><td class="num">${fmtPercent(b.meanOutcome)}</td></tr>`)}</tbody></table></div>`,
      )
    : html`<p class="muted">The calibration diagram appears once trades have resolved.</p>`
}
<section aria-labelledby="pos-h"><h2 id="pos-h">Open positions</h2>${
      p.openPositions.length
        ? html`<div class="scroll"><table><thead><tr><th scope="col">Book</th><th scope="col">Side</th><th scope="col">Shares</th><th scope="col">Worth</th><th scope="col">Profit</th></tr></thead><tbody>${p.openPositions.map(
            (o) => html`<tr data-market="${o.marketId}"><th scope="row"><a href="/w/${o.workspaceSlug}/markets/${o.marketId}">${o.metricName} ${o.targetDate}${o.proposalTitle ? html` · ${o.proposalTitle}` : ''}</a></th><td>${o.direction ?? '—'}</td><td class="num">${fmtValue(o.shares)}</td>${num('worth', o.worth, fmtCredits(o.worth))}${num('profit', o.profit, fmtCredits(o.profit))}</tr>`,
          )}</tbody></table></div>`
        : html`<p class="muted">None in workspaces you may read.</p>`
    }</section>
<section aria-labelledby="trades-h"><h2 id="trades-h">Recent trades</h2>${
      p.recentTrades.length
        ? html`<div class="scroll"><table><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Book</th><th scope="col">Trade</th><th scope="col">Cost</th><th scope="col">Consensus after</th></tr></thead><tbody>${p.recentTrades.map(
            (t) => html`<tr data-trade="${t.id}"><td>${fmtInstant(t.createdAt)}</td><td><a href="/w/${t.workspaceSlug}/markets/${t.marketId}">${t.metricName} ${t.targetDate}</a></td><td>${t.kind} ${t.direction ?? ''}</td>${num('cost', t.cost, fmtCredits(t.cost))}<td class="num">${fmtValue(t.consensusAfter)}</td></tr>`,
          )}</tbody></table></div>`
        : html`<p class="muted">None in workspaces you may read.</p>`
    }</section>`,
  };
}

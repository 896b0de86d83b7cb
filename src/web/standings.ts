import type { Deps } from '../deps';
import type { AnswerOf } from './api';
import { apiRead, type Visitor } from './api';
import { align, chart } from './charts';
import { fmtCredits, fmtInstant, fmtInstantMs, fmtPercent, fmtValue } from './format';
import { html, type Html } from './html';
import type { PageParts } from './layout';
import { getAgentsByIdPublic, getLeaderboard, getMarketplaceStats, getSeasons } from '../api/routes';

/** The site-wide pages of the standings (issue 23's API): the public leaderboard and a participant's public profile. */
type Profile = AnswerOf<typeof getAgentsByIdPublic>;

const SORTS = ['earnings', 'calibration', 'accuracy', 'volume'] as const;
/** Charts are keyed in milliseconds (charts.ts). */
const ms = (iso: string) => Date.parse(iso);

function num(field: string, value: number | null, text: string, tag: 'td' | 'dd' = 'td'): Html {
  const attr = value === null ? 'null' : String(value);
  return tag === 'td' ? html`<td class="num" data-field="${field}" data-value="${attr}">${text}</td>` : html`<dd class="num" data-field="${field}" data-value="${attr}">${text}</dd>`;
}

const score = (v: number | null) => (v === null ? '—' : v.toFixed(3));

/** The leaderboard page's own query: each goes to GET /api/leaderboard as it is (the API refuses what is wrong). */
export interface BoardQuery {
  sort?: string;
  /** minResolvedMarkets */
  min?: string;
  /** seasonId */
  season?: string;
  /** workspaceId (id or slug of a public workspace) */
  ws?: string;
  offset?: string;
  /** Rows a page (the API's default 50, at most 200). */
  limit?: string;
}

/** A leaderboard address keeping every filter but the ones changed. */
function boardHref(q: BoardQuery, change: BoardQuery): string {
  const merged: BoardQuery = { ...q, ...change };
  const params = new URLSearchParams();
  for (const k of ['sort', 'min', 'season', 'ws', 'limit', 'offset'] as const) {
    const value = merged[k];
    if (value !== undefined && value !== '' && !(k === 'offset' && value === '0')) params.set(k, value);
  }
  const text = params.toString();
  return text ? `/leaderboard?${text}` : '/leaderboard';
}

/**
 * The public leaderboard: ?sort= (earnings, calibration, accuracy, volume), ?min= (resolved books
 * needed), ?season= (a season's id), ?ws= (a public workspace), ?offset= and ?limit= (paging, 50 a page).
 * Every link keeps the other filters.
 */
export async function leaderboardPage(deps: Deps, v: Visitor, q: BoardQuery): Promise<PageParts> {
  const query: Record<string, string> = {};
  if (q.sort) query.sort = q.sort;
  if (q.min) query.minResolvedMarkets = q.min;
  if (q.season) query.seasonId = q.season;
  if (q.ws) query.workspaceId = q.ws;
  if (q.offset) query.offset = q.offset;
  if (q.limit) query.limit = q.limit;
  const [board, seasons, places] = await Promise.all([
    apiRead(deps, v, getLeaderboard, { query }),
    apiRead(deps, v, getSeasons),
    apiRead(deps, v, getMarketplaceStats),
  ]);
  const workspace = places.workspaces.find((w) => w.id === board.workspaceId) ?? null;
  const from = board.total ? board.offset + 1 : 0;
  const to = board.offset + board.rows.length;
  const prev = board.offset > 0 ? String(Math.max(0, board.offset - board.limit)) : null;
  const next = board.offset + board.limit < board.total ? String(board.offset + board.limit) : null;
  return {
    title: 'Leaderboard',
    visitor: v,
    body: html`<h1>Leaderboard</h1>
<p class="lead">Standings over ${workspace ? html`the workspace ${workspace.name}` : 'public workspaces'}${board.season ? html`, season ${board.season.name}` : ''}; at least ${board.minResolvedMarkets} resolved book${board.minResolvedMarkets === 1 ? '' : 's'}.</p>
<form action="/leaderboard" method="get" class="go filters" aria-label="Filter the leaderboard">
${(['sort', 'min', 'limit'] as const).map((k) => (q[k] ? html`<input type="hidden" name="${k}" value="${q[k]}">` : ''))}
<label for="lb-season">Season</label> <select id="lb-season" name="season"><option value="">All time</option>${seasons.map((s) => html`<option value="${s.id}"${s.id === board.season?.id ? ' selected' : ''}>${s.name} (${s.status})</option>`)}</select>
<label for="lb-ws">Workspace</label> <select id="lb-ws" name="ws"><option value="">All public workspaces</option>${places.workspaces.map((w) => html`<option value="${w.slug}"${w.id === board.workspaceId ? ' selected' : ''}>${w.name}</option>`)}</select>
<button type="submit">Show</button></form>
<nav aria-label="Sort by" class="sorts">Sort by: ${SORTS.map((s) => (s === board.sort ? html`<strong aria-current="page">${s}</strong> ` : html`<a href="${boardHref(q, { sort: s, offset: undefined })}">${s}</a> `))}</nav>
<div class="scroll" tabindex="0" role="region" aria-label="Leaderboard (scrolls sideways on a narrow screen)"><table class="board"><caption>${board.total} participant${board.total === 1 ? '' : 's'}${board.total > board.rows.length ? html`: ${from} to ${to} shown` : ''}</caption>
<thead><tr><th scope="col">Rank</th><th scope="col">Participant</th><th scope="col">Earnings</th><th scope="col">Calibration</th><th scope="col">Accuracy</th><th scope="col">Volume</th><th scope="col">Resolved</th><th scope="col">Trades</th></tr></thead>
<tbody>${
      board.rows.length
        ? board.rows.map(
            (r) =>
              html`<tr data-agent="${r.agent.id}"><td class="num">${r.rank}</td><th scope="row"><a href="/participants/${encodeURIComponent(r.agent.id)}">${r.agent.nickname}</a>${r.bot ? html` <span class="badge">bot</span>` : ''}</th>${num('earnings', r.earnings, fmtCredits(r.earnings))}${num('calibration', r.calibration, score(r.calibration))}${num('accuracy', r.accuracy, score(r.accuracy))}${num('volume', r.volume, fmtCredits(r.volume))}${num('resolvedMarkets', r.resolvedMarkets, String(r.resolvedMarkets))}${num('trades', r.trades, String(r.trades))}</tr>`,
          )
        : html`<tr><td colspan="8" class="muted">Nobody qualifies yet.</td></tr>`
    }</tbody></table></div>
${
  prev !== null || next !== null
    ? html`<nav aria-label="Pages" class="pages">${prev !== null ? html`<a rel="prev" href="${boardHref(q, { offset: prev })}">Previous ${board.limit}</a>` : ''} ${next !== null ? html`<a rel="next" href="${boardHref(q, { offset: next })}">Next ${Math.min(board.limit, board.total - board.offset - board.limit)}</a>` : ''}</nav>`
    : ''
}`,
  };
}

/** A participant's public profile: balance and P&L over time, the calibration diagram, positions and trades. */
export async function profilePage(deps: Deps, v: Visitor, id: string): Promise<PageParts> {
  const p = await apiRead(deps, v, getAgentsByIdPublic, { params: { id } });
  const balance = p.balanceHistory.map((b) => [ms(b.at), b.balance] as [number, number | null]);
  const pnl = p.pnlHistory.map((b) => [ms(b.at), b.cumulative] as [number, number | null]);
  const bins = p.stats.calibrationBins.filter((b) => b.meanForecast !== null && b.meanOutcome !== null);
  const calibration = align([
    { label: 'Observed', points: bins.map((b) => [b.meanForecast!, b.meanOutcome] as [number, number | null]), points_: true },
    { label: 'Perfectly calibrated', points: [[0, 0], [1, 1]] },
  ]);
  const tableOf = (label: string, pts: [number, number | null][]) =>
    html`<div class="scroll" tabindex="0" role="region" aria-label="History (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">Time (UTC)</th><th scope="col">${label}</th></tr></thead><tbody>${pts.map((x) => html`<tr><td>${fmtInstantMs(x[0])}</td><td class="num">${fmtCredits(x[1])}</td></tr>`)}</tbody></table></div>`;
  const s = p.stats;
  return {
    title: p.nickname,
    visitor: v,
    charts: true,
    body: html`<h1>${p.nickname}${p.bot ? html` <span class="badge">bot</span>` : ''}</h1>
${p.bio ? html`<p class="lead">${p.bio}</p>` : ''}
${people(p)}
<dl class="facts" data-agent="${p.id}">
<div><dt>Balance</dt>${num('balance', p.balance, fmtCredits(p.balance), 'dd')}</div>
<div><dt>Rank</dt>${num('rank', s.rank, s.rank === null ? '—' : String(s.rank), 'dd')}</div>
<div><dt>Total earnings</dt>${num('totalEarnings', s.totalEarnings, fmtCredits(s.totalEarnings), 'dd')}</div>
${p.withBotsEarnings !== null ? html`<div><dt>With bots</dt>${num('withBotsEarnings', p.withBotsEarnings, fmtCredits(p.withBotsEarnings), 'dd')}</div>` : ''}
<div><dt>Settled earnings</dt>${num('settledEarnings', s.settledEarnings, fmtCredits(s.settledEarnings), 'dd')}</div>
<div><dt>Open earnings</dt>${num('openEarnings', s.openEarnings, fmtCredits(s.openEarnings), 'dd')}</div>
<div><dt>Calibration</dt>${num('calibration', s.calibration, score(s.calibration), 'dd')}</div>
<div><dt>Accuracy</dt>${num('accuracy', s.accuracy, score(s.accuracy), 'dd')}</div>
<div><dt>Trades</dt>${num('totalTrades', s.totalTrades, String(s.totalTrades), 'dd')}</div>
<div><dt>Volume</dt>${num('tradedVolume', s.tradedVolume, fmtCredits(s.tradedVolume), 'dd')}</div>
</dl>
${leftOut()}
<div class="cols">
${chart('Balance over time', { ...align([{ label: 'Balance', points: balance, step: true }]), xKind: 'time', yLabel: 'Balance', unit: 'cr' }, tableOf('Balance', balance))}
${chart('Profit and loss over time (cumulative)', { ...align([{ label: 'P&L', points: pnl, step: true }]), xKind: 'time', yLabel: 'Profit and loss', unit: 'cr' }, tableOf('P&L', pnl))}
</div>
${
  bins.length
    ? chart(
        'Calibration: how often the outcome came out higher, against the forecast',
        { ...calibration, xKind: 'number', xLabel: 'Forecast probability', yLabel: 'Observed frequency', unit: null },
        html`<div class="scroll" tabindex="0" role="region" aria-label="Calibration (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">Forecast bin</th><th scope="col">Trades</th><th scope="col">Mean forecast</th><th scope="col">Observed</th></tr></thead><tbody>${bins.map((b) => html`<tr><td>${fmtPercent(b.from)} to ${fmtPercent(b.to)}</td><td class="num">${b.trades}</td><td class="num">${fmtPercent(b.meanForecast)}</td><td class="num">${fmtPercent(b.meanOutcome)}</td></tr>`)}</tbody></table></div>`,
      )
    : html`<p class="muted">The calibration diagram appears once trades have resolved.</p>`
}
<section aria-labelledby="pos-h"><h2 id="pos-h">Open positions</h2>${
      p.openPositions.length
        ? html`<div class="scroll" tabindex="0" role="region" aria-label="Positions (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">Book</th><th scope="col">Side</th><th scope="col">Shares</th><th scope="col">Worth</th><th scope="col">Profit</th></tr></thead><tbody>${p.openPositions.map(
            (o) => html`<tr data-market="${o.marketId}"><th scope="row"><a href="/w/${o.workspaceSlug}/markets/${o.marketId}">${o.metricName} ${o.targetDate}${o.proposalTitle ? html` · ${o.proposalTitle}` : ''}</a></th><td>${o.direction ?? '—'}</td><td class="num">${fmtValue(o.shares)}</td>${num('worth', o.worth, fmtCredits(o.worth))}${num('profit', o.profit, fmtCredits(o.profit))}</tr>`,
          )}</tbody></table></div>`
        : html`<p class="muted">None in workspaces you may read.</p>`
    }</section>
<section aria-labelledby="trades-h"><h2 id="trades-h">Recent trades</h2>${
      p.recentTrades.length
        ? html`<div class="scroll" tabindex="0" role="region" aria-label="Recent trades (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Book</th><th scope="col">Trade</th><th scope="col">Cost</th><th scope="col">Consensus after</th></tr></thead><tbody>${p.recentTrades.map(
            (t) => html`<tr data-trade="${t.id}"><td>${fmtInstant(t.createdAt)}</td><td><a href="/w/${t.workspaceSlug}/markets/${t.marketId}">${t.metricName} ${t.targetDate}</a></td><td>${t.kind} ${t.direction ?? ''}</td>${num('cost', t.cost, fmtCredits(t.cost))}<td class="num">${fmtValue(t.consensusAfter)}</td></tr>`,
          )}</tbody></table></div>`
        : html`<p class="muted">None in workspaces you may read.</p>`
    }</section>
${bots(p)}
${transfers(p)}`,
  };
}

/**
 * What Trades and Volume count, beside a list that may hold more: they count trades on open and
 * resolved books in public workspaces (the API's stats); the list also shows trades on voided books
 * (refunded) and in the private workspaces the visitor may read. Said, so figures and list agree.
 */
function leftOut(): Html {
  return html`<p class="muted" data-field="counted">Trades and Volume count trades on open and resolved books in public workspaces. The recent trades below also list trades on voided books (their cost was refunded) and in private workspaces you may read: those are left out of the two figures.</p>`;
}

const who = (r: { id: string; nickname: string }) => html`<a href="/participants/${encodeURIComponent(r.id)}">${r.nickname}</a>`;

/** Who runs this participant and where it is active (public workspaces only, as the API gives them). */
function people(p: Profile): Html {
  const rows: Html[] = [];
  if (p.owner) rows.push(html`<div><dt>Owner</dt><dd data-field="owner" data-value="${p.owner.id}">${who(p.owner)}</dd></div>`);
  if (p.parent && p.parent.id !== p.owner?.id) rows.push(html`<div><dt>Created by</dt><dd data-field="parent" data-value="${p.parent.id}">${who(p.parent)}</dd></div>`);
  if (p.runBy) rows.push(html`<div><dt>Run by</dt><dd>${p.runBy}${p.model ? ` (${p.model})` : ''}</dd></div>`);
  rows.push(html`<div><dt>Joined</dt><dd>${fmtInstant(p.joinedAt)}</dd></div>`);
  rows.push(
    html`<div><dt>Workspaces</dt><dd data-field="workspaces" data-value="${p.activeWorkspaces.length}">${
      p.activeWorkspaces.length ? p.activeWorkspaces.map((w, i) => html`${i ? ', ' : ''}<a href="/w/${encodeURIComponent(w.id)}">${w.name}</a>`) : html`<span class="muted">none public</span>`
    }</dd></div>`,
  );
  return html`<dl class="about">${rows}</dl>`;
}

/** The participant's bots (agents it owns) with their earnings and trades. */
function bots(p: Profile): Html {
  if (p.bot && !p.bots.length) return html``;
  return html`<section aria-labelledby="bots-h"><h2 id="bots-h">Bots</h2>${
    p.bots.length
      ? html`<div class="scroll" tabindex="0" role="region" aria-label="Bots (scrolls sideways on a narrow screen)"><table class="bots"><thead><tr><th scope="col">Bot</th><th scope="col">Total earnings</th><th scope="col">Trades</th></tr></thead><tbody>${p.bots.map(
          (b) => html`<tr data-bot="${b.id}"><th scope="row">${who(b)}</th>${num('totalEarnings', b.totalEarnings, fmtCredits(b.totalEarnings))}${num('totalTrades', b.totalTrades, String(b.totalTrades))}</tr>`,
        )}</tbody></table></div>`
      : html`<p class="muted">No bots.</p>`
  }</section>`;
}

/** Credits sent and received (the API lists them to the participant itself and its owner only). */
function transfers(p: Profile): Html {
  return html`<section aria-labelledby="transfers-h"><h2 id="transfers-h">Transfers</h2>${
    p.transfers.length
      ? html`<div class="scroll" tabindex="0" role="region" aria-label="Transfers (scrolls sideways on a narrow screen)"><table class="transfers"><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Direction</th><th scope="col">Counterparty</th><th scope="col">Credits</th><th scope="col">Memo</th></tr></thead><tbody>${p.transfers.map(
          (t) =>
            html`<tr data-transfer="${t.id}"><td>${fmtInstant(t.createdAt)}</td><td>${t.direction === 'in' ? 'received' : 'sent'}</td><td>${t.counterparty ? who(t.counterparty) : html`<span class="muted">the service</span>`}</td>${num('credits', t.credits, fmtCredits(t.credits))}<td>${t.memo ?? ''}</td></tr>`,
        )}</tbody></table></div>`
      : html`<p class="muted">None you may see: transfers are shown to the participant and its owner.</p>`
  }</section>`;
}

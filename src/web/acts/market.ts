import type Koa from 'koa';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { apiAct, apiQuote, apiRead, type Visitor } from '../api';
import { idempotencyKeyOf, type FormState } from '../forms';
import { fmtCredits, fmtPercent, fmtValue } from '../format';
import { html, type Html } from '../html';
import { join, joinSection } from './join';
import { backDone, basics, carried, doneNote, field, hasCredentials, numberOf, signInTo, stepOf, wholeRefusal, workspaceSlug } from './common';
import { deletePredictionsOrdersById, getAgentsByIdPositions, getPredictionsMarketsById, getPredictionsOrders, getWorkspacesCurrent, postPredictionsMarketsByIdFund, postPredictionsOrders, postPredictionsTrade } from '../../api/routes';
import type { AnswerOf } from '../api';

/**
 * Acting on a book from its page (issue 59): trade with a quote first (shares, cost, the payout if
 * right, the consensus after), your position with sell, fund an unfunded book, place and cancel a
 * limit order, and join a public workspace to trade in it. Every form posts to the page; money acts
 * send the form's Idempotency-Key.
 */

type Book = Pick<AnswerOf<typeof getPredictionsMarketsById>, 'id' | 'status' | 'funded' | 'rangeMin' | 'rangeMax'>;
type Position = AnswerOf<typeof getAgentsByIdPositions>[number];
type Order = AnswerOf<typeof getPredictionsOrders>[number];
/** A trade's dry run as POST /predictions/trade answers it (the TradeQuote member of its answer). */
type Quote = Extract<AnswerOf<typeof postPredictionsTrade>, { dryRun: true }>;

const TRADING = new Set(['open', 'conditional']);
const d = (name: string, value: number | null, text: string) => html`<div><dt>${name}</dt><dd class="num" data-field="${name.toLowerCase().replace(/[^a-z]+/g, '-')}" data-value="${value === null ? 'null' : String(value)}">${text}</dd></div>`;

/** What a trade quote says, as a list of facts (buy: cost and payout if right; sell: proceeds). */
function quoteFacts(q: Quote, book: Book, unit: string | null): Html {
  const buy = q.cost !== undefined;
  const edge = q.direction === 'higher' ? book.rangeMax : book.rangeMin;
  return html`<dl class="facts quote" data-quote="${q.direction}" data-consensus="${q.consensus}">
${d('Shares', q.shares, `${fmtValue(q.shares)} ${q.direction}`)}
${buy ? d('Cost', q.cost!, fmtCredits(q.cost)) : d('Proceeds', q.proceeds!, fmtCredits(q.proceeds))}
${buy ? d('Payout if right', q.shares, fmtCredits(q.shares)) : ''}
${q.redeemed > 0 ? d('Redeemed pairs', q.redeemed, fmtCredits(q.redeemed)) : ''}
${d('Consensus now', q.prevConsensus, fmtValue(q.prevConsensus, unit))}
${d('Consensus after', q.consensus, fmtValue(q.consensus, unit))}
${d('Your balance', q.balance, fmtCredits(q.balance))}
</dl>
${buy ? html`<p class="muted">Each ${q.direction} share pays 1 cr if the value resolves at or ${q.direction === 'higher' ? 'above' : 'below'} ${fmtValue(edge, unit)}, and its share of the range in between; ${fmtPercent(q.probability)} is the probability of higher after the trade.</p>` : ''}
${q.affordable ? '' : html`<p class="err" role="alert" data-code="insufficient_balance">Your balance does not cover it: short ${fmtCredits(q.shortfall)}.</p>`}`;
}

/** A Review step's form, or the quote with a Confirm form carrying the reviewed values and the same key. */
function confirmForm(form: string, back: string, state: FormState, names: readonly string[], label: string): Html {
  return html`<form method="post" action="${back}" class="confirm" id="${form}-confirm-form">${basics(form, back, state)}<input type="hidden" name="step" value="confirm">${carried(state.values, names)}<button type="submit" id="${form}-confirm">${label}</button></form>`;
}

function tradeSection(book: Book, back: string, unit: string | null, state: FormState | undefined): Html {
  const f = 'trade';
  const quote = state?.form === f ? (state.quote as Quote | undefined) : undefined;
  const dir = (state?.form === f ? state.values.get('direction') : null) ?? 'higher';
  return html`<section aria-labelledby="trade-h" class="act trade" id="trade"${quote ? html` data-keep` : ''}><h2 id="trade-h">Trade</h2>
${doneNote(state, f, 'Done: your trade went through. Your position is below.')}
<form method="post" action="${back}#trade" id="trade-form" novalidate>${basics(f, back, state)}<input type="hidden" name="step" value="review">
<fieldset><legend>Direction</legend>
<label><input type="radio" name="direction" value="higher"${dir !== 'lower' ? html` checked` : ''}> Higher</label>
<label><input type="radio" name="direction" value="lower"${dir === 'lower' ? html` checked` : ''}> Lower</label>
</fieldset>
${field(state, f, 'amount', 'Credits to spend', { type: 'number', required: true, value: '10', attrs: html` min="0"` })}
${wholeRefusal(state, f, ['amount', 'direction'])}
<p><button type="submit" id="trade-quote-button">Get a quote</button></p></form>
${quote ? html`<div id="trade-quote" role="status" data-state="quote">${quoteFacts(quote, book, unit)}${quote.affordable ? confirmForm(f, `${back}#trade`, state!, ['direction', 'amount'], 'Confirm the trade') : ''}</div>` : ''}
</section>`;
}

function positionSection(book: Book, back: string, pos: Position | undefined, unit: string | null, state: FormState | undefined): Html {
  const f = 'sell';
  if (!pos || (pos.shares === 0 && pos.totalCost === 0)) {
    return html`<section aria-labelledby="position-h" class="act" id="position"><h2 id="position-h">Your position</h2>${doneNote(state, f, 'Done: sold.')}<p class="muted" data-field="position" data-value="0">You hold no shares on this book.</p></section>`;
  }
  const quote = state?.form === f ? (state.quote as Quote | undefined) : undefined;
  const sellable = pos.shares > 0 && pos.direction && (TRADING.has(book.status) || book.status === 'closed');
  const settled = book.status === 'resolved' || book.status === 'voided';
  return html`<section aria-labelledby="position-h" class="act" id="position"${quote ? html` data-keep` : ''}><h2 id="position-h">Your position</h2>
${doneNote(state, f, 'Done: sold. Your position is updated.')}
<dl class="facts" data-position="${pos.marketId}">
${d('Shares', pos.shares, `${fmtValue(pos.shares)} ${pos.direction ?? ''}`)}
${d('Net cost', pos.totalCost, fmtCredits(pos.totalCost))}
${settled ? d('Paid', pos.worth, fmtCredits(pos.worth)) : d('Sell now for', pos.sellValue, fmtCredits(pos.sellValue))}
${settled ? d('Profit', pos.profit, fmtCredits(pos.profit)) : d('Profit if sold now', pos.sellProfit, fmtCredits(pos.sellProfit))}
</dl>
${
  settled
    ? html`<p class="muted">${book.status === 'resolved' ? 'The book resolved: your shares were redeemed into your balance at their payout, with nothing to claim.' : 'The book was voided: your net cost came back to your balance.'}</p>`
    : html`<p class="muted" id="position-valued">Valued at what selling every share now would return: a sale moves the price against you as it goes. At the consensus the shares are worth <span data-field="worth-at-consensus" data-value="${String(pos.worth)}">${fmtCredits(pos.worth)}</span>.</p>`
}
${
  sellable
    ? html`<form method="post" action="${back}#position" id="sell-form">${basics(f, back, state)}<input type="hidden" name="step" value="review"><input type="hidden" name="direction" value="${pos.direction!}">
${field(state, f, 'sellShares', `Shares to sell (you hold ${fmtValue(pos.shares)} ${pos.direction})`, { type: 'number', required: true, value: String(pos.shares), attrs: html` min="0"` })}
${wholeRefusal(state, f, ['sellShares'])}
<p><button type="submit" id="sell-quote-button">Get a quote</button></p></form>
${quote ? html`<div id="sell-quote" role="status">${quoteFacts(quote, book, unit)}${confirmForm(f, `${back}#position`, state!, ['direction', 'sellShares'], 'Confirm the sale')}</div>` : ''}`
    : ''
}</section>`;
}

function fundSection(book: Book, back: string, state: FormState | undefined): Html {
  const f = 'fund';
  if (book.funded || !TRADING.has(book.status)) return doneNote(state, f, 'Done: you funded this book; it trades now.');
  return html`<section aria-labelledby="fund-h" class="act" id="fund"><h2 id="fund-h">Fund this book</h2>
<p class="muted">The book is unfunded: nobody can trade until someone puts in its liquidity. Your credits become its pool and come back with the pool's remainder when it resolves or is voided, shared among its funders.</p>
<form method="post" action="${back}#fund" id="fund-form">${basics(f, back, state)}
${field(state, f, 'credits', 'Credits to put in', { type: 'number', required: true, attrs: html` min="0"` })}
${wholeRefusal(state, f, ['credits'])}
<p><button type="submit">Fund the book</button></p></form></section>`;
}

function ordersSection(book: Book, back: string, orders: Order[], unit: string | null, state: FormState | undefined): Html {
  const f = 'order';
  const rows = orders.map(
    (o) =>
      html`<tr data-order="${o.id}"><td>${o.direction}</td><td class="num">${fmtValue(o.limit, unit)}</td><td class="num">${fmtValue(o.remaining)} of ${fmtValue(o.shares)}</td><td class="num">${fmtCredits(o.reserved)}</td><td><form method="post" action="${back}#orders" id="order-cancel-${o.id}">${basics('cancel-order', back)}<input type="hidden" name="orderId" value="${o.id}"><button type="submit" aria-label="${`Cancel the ${o.direction} order at ${fmtValue(o.limit, unit)}`}">Cancel</button></form></td></tr>`,
  );
  const dir = (state?.form === f ? state.values.get('direction') : null) ?? 'higher';
  return html`<section aria-labelledby="orders-h" class="act" id="orders"><h2 id="orders-h">Your limit orders</h2>
${doneNote(state, f, 'Done: your order is placed.')}${doneNote(state, 'cancel-order', 'Done: the order is cancelled and its unused reserve is back in your balance.')}
${wholeRefusal(state, 'cancel-order', [])}
${rows.length ? html`<div class="scroll" tabindex="0" role="region" aria-label="Your limit orders (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">Side</th><th scope="col">Limit</th><th scope="col">Shares left</th><th scope="col">Reserved</th><th scope="col"><span class="sr-only">Cancel</span></th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p class="muted">No open orders on this book.</p>`}
${
  TRADING.has(book.status) && book.funded
    ? html`<form method="post" action="${back}#orders" id="order-form">${basics(f, back, state)}
<fieldset><legend>Buy side</legend>
<label><input type="radio" name="direction" value="higher"${dir !== 'lower' ? html` checked` : ''}> Higher</label>
<label><input type="radio" name="direction" value="lower"${dir === 'lower' ? html` checked` : ''}> Lower</label>
</fieldset>
${field(state, f, 'limit', `Limit (the consensus to buy at, ${fmtValue(book.rangeMin, unit)} to ${fmtValue(book.rangeMax, unit)})`, { type: 'number', required: true })}
${field(state, f, 'amount', 'Credits to reserve', { type: 'number', required: true, attrs: html` min="0"` })}
${wholeRefusal(state, f, ['direction', 'limit', 'amount'])}
<p><button type="submit">Place the order</button></p></form>`
    : ''
}</section>`;
}

/**
 * The acting part of a market page for this visitor: nothing but a sign-in link without credentials;
 * a join form on a public workspace the visitor may not trade in; else the trade, position, fund and
 * order forms the book's state allows (the API decides each act all the same).
 */
export async function marketActs(deps: Deps, v: Visitor, book: Book, slug: string, unit: string | null, state?: FormState): Promise<Html> {
  const back = `/w/${slug}/markets/${book.id}`;
  if (!hasCredentials(v)) return signInTo(back, 'trade on this book');
  // The three reads at once: a visitor without trade is refused its orders, and is shown the join form instead.
  const [current, positions, orders] = await Promise.all([
    apiRead(deps, v, getWorkspacesCurrent),
    apiRead(deps, v, getAgentsByIdPositions, { params: { id: 'me' } }),
    apiRead(deps, v, getPredictionsOrders, { query: { marketId: book.id, status: 'open', limit: '100' } }).catch((err: unknown) => {
      if (err instanceof DomainError) return [];
      throw err;
    }),
  ]);
  if (!current.capabilities.includes('trade')) return joinSection(v, current, back, state);
  const pos = positions.find((p) => p.marketId === book.id);
  return html`${joinSection(v, current, back, state)}
${TRADING.has(book.status) && book.funded ? tradeSection(book, back, unit, state) : ''}
${fundSection(book, back, state)}
${positionSection(book, back, pos, unit, state)}
${ordersSection(book, back, orders, unit, state)}`;
}

/** The market page's forms with a review step (a quote, nothing written): shown again by GET (reviewOf). */
export const REVIEWED_ON_BOOKS = ['trade', 'sell'] as const;

/** A form posted on a market page: trade or sell (Review, then Confirm), fund, place or cancel an order, join. */
export async function marketAct(deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string | { show: unknown; at?: string }> {
  const slug = workspaceSlug(ctx);
  const marketId = String(ctx.params.id);
  const page = `/w/${slug}/markets/${marketId}`;
  const key = { idempotencyKey: idempotencyKeyOf(values) };
  switch (values.get('form')) {
    case 'trade':
    case 'sell': {
      const form = values.get('form')!;
      const body =
        form === 'trade'
          ? { marketId, direction: values.get('direction') ?? undefined, amount: numberOf(values, 'amount') }
          : { marketId, direction: values.get('direction') ?? undefined, sellShares: numberOf(values, 'sellShares') };
      if (stepOf(values) === 'review') return { show: await apiQuote(deps, v, postPredictionsTrade, { body }), at: form === 'trade' ? 'trade' : 'position' };
      await apiAct(deps, v, postPredictionsTrade, { body, ...key });
      return backDone(values, page, form, form === 'trade' ? 'trade' : 'position');
    }
    case 'fund':
      await apiAct(deps, v, postPredictionsMarketsByIdFund, { params: { id: marketId }, body: { credits: numberOf(values, 'credits') }, ...key });
      return backDone(values, page, 'fund', 'trade');
    case 'order':
      await apiAct(deps, v, postPredictionsOrders, {
        body: { marketId, direction: values.get('direction') ?? undefined, limit: numberOf(values, 'limit'), amount: numberOf(values, 'amount') },
        ...key,
      });
      return backDone(values, page, 'order', 'orders');
    case 'cancel-order':
      await apiAct(deps, v, deletePredictionsOrdersById, { params: { id: values.get('orderId') ?? '' } });
      return backDone(values, page, 'cancel-order', 'orders');
    case 'join':
      await join(deps, v);
      return backDone(values, page, 'join', 'trade');
    default:
      throw new DomainError('validation_failed', 'This page has no such form: nothing was done.');
  }
}

/**
 * The visitor's positions in this workspace, each linking to its book (where it sells), on the
 * workspace's home: nothing without credentials or positions.
 */
export async function positionsHere(deps: Deps, v: Visitor, ws: { id: string; slug: string }): Promise<Html> {
  if (!hasCredentials(v)) return html``;
  const mine = (await apiRead(deps, v, getAgentsByIdPositions, { params: { id: 'me' } })).filter((p) => p.workspaceId === ws.id && (p.shares > 0 || p.totalCost !== 0));
  if (!mine.length) return html``;
  return html`<section aria-labelledby="mine-h" id="positions"><h2 id="mine-h">Your positions</h2><div class="scroll" tabindex="0" role="region" aria-label="Your positions (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">Book</th><th scope="col">Shares</th><th scope="col">Net cost</th><th scope="col">Sell now for</th><th scope="col">Profit if sold now</th><th scope="col">Status</th></tr></thead><tbody>${mine.map(
    (p) =>
      html`<tr data-position="${p.marketId}"><th scope="row"><a href="${`/w/${ws.slug}/markets/${p.marketId}#position`}">${p.metricName} ${p.targetDate}${p.branch ? ` (if ${p.branch})` : ''}</a></th><td class="num">${fmtValue(p.shares)} ${p.direction ?? ''}</td><td class="num">${fmtCredits(p.totalCost)}</td><td class="num" data-field="sell-value" data-value="${String(p.sellValue)}">${fmtCredits(p.sellValue)}</td><td class="num">${fmtCredits(p.sellProfit)}</td><td>${p.status}</td></tr>`,
  )}</tbody></table></div><p class="muted">A live position is valued at what selling all of it now would return; a settled one at what it paid.</p></section>`;
}

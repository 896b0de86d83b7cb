import type Koa from 'koa';
import type { Deps } from '../../deps';
import { apiAct, apiRead, type Visitor } from '../api';
import { idempotencyKeyOf, type FormState } from '../forms';
import { fmtCredits, fmtInstant } from '../format';
import { html } from '../html';
import type { PageParts } from '../layout';
import { backDone, basics, doneNote, field, hasCredentials, numberOf, signInTo, textOf, wholeRefusal } from './common';
import { getAgentsByIdBalance, getAgentsMe, getAgentsTransfers, postAgentsTransfer } from '../../api/routes';

/** Transferring credits from a page (/transfer, issue 59): your balance, the form, your recent transfers. */

const PAGE = '/transfer';

export async function transferPage(deps: Deps, v: Visitor, state?: FormState): Promise<PageParts> {
  if (!hasCredentials(v)) return { title: 'Transfer credits', body: html`<h1>Transfer credits</h1>${signInTo(PAGE, 'transfer credits')}` };
  const [me, balance, transfers] = await Promise.all([
    apiRead(deps, v, getAgentsMe),
    apiRead(deps, v, getAgentsByIdBalance, { params: { id: 'me' } }),
    apiRead(deps, v, getAgentsTransfers, { query: { limit: '20' } }),
  ]);
  const f = 'transfer';
  return {
    title: 'Transfer credits',
    visitor: v,
    body: html`<h1>Transfer credits</h1>
${doneNote(state, f, 'Done: the credits are transferred.')}
<p>Your balance: <span class="num" data-field="balance" data-value="${balance.balance}">${fmtCredits(balance.balance)}</span></p>
<form method="post" action="${PAGE}" id="transfer-form">${basics(f, PAGE, state)}
${field(state, f, 'toAgent', 'To (participant id or nickname)', { required: true })}
${field(state, f, 'amount', 'Credits', { type: 'number', required: true, attrs: html` min="0"` })}
${field(state, f, 'memo', 'Memo', { hint: 'optional, shown to both of you' })}
${wholeRefusal(state, f, ['toAgent', 'amount', 'memo'])}
<p><button type="submit">Transfer</button></p></form>
<section aria-labelledby="transfers-h"><h2 id="transfers-h">Your recent transfers</h2>${
      transfers.length
        ? html`<div class="scroll" tabindex="0" role="region" aria-label="Your recent transfers (scrolls sideways on a narrow screen)"><table><thead><tr><th scope="col">When (UTC)</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Credits</th><th scope="col">Memo</th></tr></thead><tbody>${transfers.map(
            (t) =>
              html`<tr data-transfer="${t.id}"><td>${fmtInstant(t.createdAt)}</td><td>${t.fromAgent === me.id ? 'you' : t.fromAgent}</td><td>${t.toAgent === me.id ? 'you' : t.toAgent}</td><td class="num">${fmtCredits(t.amount)}</td><td>${t.memo ?? ''}</td></tr>`,
          )}</tbody></table></div>`
        : html`<p class="muted">No transfers yet.</p>`
    }</section>`,
  };
}

/**
 * A transfer request (the "Ask someone for credits" link of /credits): /transfer?to=<nickname>
 * opens the form addressed to them (and ?amount= filled in); nothing moves until the sender confirms.
 */
export function transferRequestOf(ctx: Koa.Context): FormState | undefined {
  const to = typeof ctx.query.to === 'string' ? ctx.query.to.slice(0, 200) : '';
  if (!to) return undefined;
  const values = new URLSearchParams({ toAgent: to });
  if (typeof ctx.query.amount === 'string' && /^\d{1,12}(\.\d{1,9})?$/.test(ctx.query.amount)) values.set('amount', ctx.query.amount);
  return { form: 'transfer', values, refusal: null };
}

export async function transferAct(deps: Deps, _ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string> {
  await apiAct(deps, v, postAgentsTransfer, {
    body: { toAgent: values.get('toAgent') ?? '', amount: numberOf(values, 'amount'), memo: textOf(values, 'memo') },
    idempotencyKey: idempotencyKeyOf(values),
  });
  return backDone(values, PAGE, 'transfer');
}

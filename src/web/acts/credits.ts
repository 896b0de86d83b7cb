import type Koa from 'koa';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { apiAct, apiRead, type Visitor } from '../api';
import { idempotencyKeyOf, type FormState } from '../forms';
import { fmtCredits, fmtInstant } from '../format';
import { html, type Html } from '../html';
import type { PageParts } from '../layout';
import { backDone, basics, doneNote, field, hasCredentials, signInTo, textOf, wholeRefusal } from './common';
import { getAgentsByIdBalance, getAgentsByIdDeposits, getAgentsDepositAddress, getAgentsMe, getAgentsSignupGrant, postAgentsByIdDeposit, postAgentsSignupGrant, putAgentsByIdWallet } from '../../api/routes';
import type { AnswerOf } from '../api';

/**
 * "Get credits" (issue 65): every way a person's balance grows, on one page: the sign-up grant the
 * operator configures (SIGNUP_CREDITS, once per person), a transfer request (a link that opens the
 * transfer form addressed to you), and, where a chain is configured, a deposit: the treasury's
 * address, the wallet it must come from, the txHash pasted, and the deposit watched until it confirms.
 */

export const CREDITS_PAGE = '/credits';

type Grant = AnswerOf<typeof getAgentsSignupGrant>;
type DepositAddress = AnswerOf<typeof getAgentsDepositAddress>;
type Deposit = AnswerOf<typeof getAgentsByIdDeposits>[number];

/** The grant as the visitor may take it (null: no session, or nothing to take). */
export async function grantOf(deps: Deps, v: Visitor): Promise<Grant | null> {
  if (!hasCredentials(v)) return null;
  const g = await apiRead(deps, v, getAgentsSignupGrant);
  return g.available ? g : null;
}

/** The button that pays the grant, posted to the credits page and back to `back` (the home page after sign-up). */
export function grantForm(g: Grant, back: string, state?: FormState): Html {
  return html`<section aria-labelledby="grant-h" class="act" id="grant"><h2 id="grant-h">Your sign-up grant</h2>
<p>This service gives each person who signs up <strong data-field="grant" data-value="${String(g.credits)}">${fmtCredits(g.credits)}</strong> to start trading, once.</p>
<form method="post" action="${CREDITS_PAGE}" id="grant-form">${basics('grant', back, state)}<p><button type="submit" id="grant-button">Take the ${fmtCredits(g.credits)} grant</button></p>${wholeRefusal(state, 'grant', [])}</form></section>`;
}

/** The treasury's address, or null when this instance has no chain (503 treasury_not_configured). */
async function treasuryOf(deps: Deps, v: Visitor): Promise<DepositAddress | null> {
  try {
    return await apiRead(deps, v, getAgentsDepositAddress);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'treasury_not_configured') return null;
    throw err;
  }
}

function depositSection(t: DepositAddress | null, deposits: Deposit[], state: FormState | undefined): Html {
  if (!t) return html`<section aria-labelledby="deposit-h" id="deposit"><h2 id="deposit-h">Deposit</h2><p class="muted">This service takes no deposits: its operator has configured no chain. Use the grant or a transfer.</p></section>`;
  const rows = deposits.map(
    (d) =>
      html`<tr data-deposit="${d.id}" data-status="${d.status}"><td>${fmtInstant(d.createdAt)}</td><td><code>${`${d.txHash.slice(0, 10)}…${d.txHash.slice(-6)}`}</code></td><td>${d.status}${d.status === 'pending' ? ` (${d.checks} checks)` : d.reason ? `: ${d.reason}` : ''}</td><td class="num">${d.credits === null ? '' : fmtCredits(d.credits)}</td></tr>`,
  );
  const pending = deposits.some((d) => d.status === 'pending');
  return html`<section aria-labelledby="deposit-h" id="deposit"><h2 id="deposit-h">Deposit ${t.asset}</h2>
${doneNote(state, 'deposit', 'Sent: the deposit is checked on chain below; this page refreshes until it confirms.')}${doneNote(state, 'wallet', 'Done: your wallet is registered.')}
<ol>
<li>Register the wallet you send from (deposits must come from it).
<form method="post" action="${CREDITS_PAGE}#deposit" id="wallet-form">${basics('wallet', CREDITS_PAGE, state)}${field(state, 'wallet', 'walletAddress', 'Your wallet address', { required: true, attrs: html` autocomplete="off" spellcheck="false"` })}${wholeRefusal(state, 'wallet', ['walletAddress'])}<p><button type="submit">Register the wallet</button></p></form></li>
<li>Send ${t.asset} on chain ${String(t.chainId)} to the treasury: <code data-field="treasury" id="treasury-address">${t.address}</code> (token contract <code>${t.contract}</code>). A credit costs ${String(t.creditValueUsd)} USD plus a ${String(t.buyFeePercent)}% fee.</li>
<li>Paste the transaction's hash: it is credited after ${String(t.confirmations)} confirmations.
<form method="post" action="${CREDITS_PAGE}#deposit" id="deposit-form">${basics('deposit', CREDITS_PAGE, state)}${field(state, 'deposit', 'txHash', 'Transaction hash (0x and 64 hex digits)', { required: true, attrs: html` autocomplete="off" spellcheck="false"` })}${wholeRefusal(state, 'deposit', ['txHash'])}<p><button type="submit">Claim the deposit</button></p></form></li>
</ol>
${rows.length ? html`<div class="scroll" tabindex="0" role="region" aria-label="Your deposits"><table><caption>Your deposits</caption><thead><tr><th scope="col">When (UTC)</th><th scope="col">Transaction</th><th scope="col">Status</th><th scope="col">Credits</th></tr></thead><tbody>${rows}</tbody></table></div>` : ''}
${pending ? html`<form method="get" action="${CREDITS_PAGE}#deposit" data-watch="deposits"><p class="muted">A pending deposit is checked on chain until it confirms; this page reloads itself meanwhile. <button type="submit">Check again</button></p></form>` : ''}
</section>`;
}

export async function creditsPage(deps: Deps, v: Visitor, state?: FormState): Promise<PageParts> {
  if (!hasCredentials(v)) return { title: 'Get credits', body: html`<h1>Get credits</h1>${signInTo(CREDITS_PAGE, 'get credits')}` };
  const [me, grant, treasury] = await Promise.all([apiRead(deps, v, getAgentsMe), apiRead(deps, v, getAgentsSignupGrant), treasuryOf(deps, v)]);
  const deposits = treasury ? await apiRead(deps, v, getAgentsByIdDeposits, { params: { id: 'me' }, query: { limit: '10' } }) : [];
  // The balance after the deposits: a deposit shown credited is in it (one credited between the two reads shows as pending).
  const balance = await apiRead(deps, v, getAgentsByIdBalance, { params: { id: 'me' } });
  const ask = `/transfer?to=${encodeURIComponent(me.nickname)}`;
  const grantPart = grant.available
    ? grantForm(grant, CREDITS_PAGE, state)
    : html`<section aria-labelledby="grant-h" id="grant"><h2 id="grant-h">Sign-up grant</h2>${doneNote(state, 'grant', 'Done: the grant is in your balance.')}<p class="muted" data-field="grant-state">${
        grant.paidAt ? `Paid on ${fmtInstant(grant.paidAt)}: it is paid once per person.` : grant.credits > 0 ? 'The sign-up grant is for a person signed in with an account.' : 'This service gives no sign-up grant.'
      }</p></section>`;
  return {
    title: 'Get credits',
    visitor: v,
    refresh: deposits.some((d) => d.status === 'pending') ? 5 : undefined,
    body: html`<h1>Get credits</h1>
<p>Your balance: <span class="num" data-field="balance" data-value="${String(balance.balance)}">${fmtCredits(balance.balance)}</span></p>
${grantPart}
<section aria-labelledby="ask-h" id="ask"><h2 id="ask-h">Ask someone for credits</h2>
<p>Send this link to someone who has credits: it opens the transfer form addressed to you (<strong>${me.nickname}</strong>).</p>
<p><a href="${ask}" id="ask-link" data-field="ask-link">${ask}</a></p></section>
${depositSection(treasury, deposits, state)}`,
  };
}

/** A form of the credits page: take the grant, register the wallet, claim a deposit. */
export async function creditsAct(deps: Deps, _ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string> {
  const key = { idempotencyKey: idempotencyKeyOf(values) };
  switch (values.get('form')) {
    case 'grant':
      await apiAct(deps, v, postAgentsSignupGrant, key);
      return backDone(values, CREDITS_PAGE, 'grant');
    case 'wallet':
      await apiAct(deps, v, putAgentsByIdWallet, { params: { id: 'me' }, body: { walletAddress: textOf(values, 'walletAddress')?.trim() ?? '' } });
      return backDone(values, CREDITS_PAGE, 'wallet', 'deposit');
    case 'deposit':
      await apiAct(deps, v, postAgentsByIdDeposit, { params: { id: 'me' }, body: { txHash: textOf(values, 'txHash')?.trim() ?? '' } });
      return backDone(values, CREDITS_PAGE, 'deposit', 'deposit');
    default:
      throw new DomainError('validation_failed', 'This page has no such form: nothing was done.');
  }
}

import { toCredits, toNano } from '../../domain/money';
import { NANO } from '../../domain/lmsr';
import { ownerPriceNano, reserveFor } from '../../domain/orderBook';
import { DomainError } from '../../errors';
import { orderProbability } from '../../services/trading';
import type { AnyRoute } from '../registry';
import { getAgentsById, getAgentsByIdBalance, getGroupsById, getMetrics, getMetricsById, getPredictionsMarketsById, getWorkspacesCurrent, postPredictionsTrade } from '../routes';
import type { Tool } from './tools';

/**
 * What the person reads before a tool acts (issues 55 and 64): names and dates instead of ids, the
 * direction, what moves and what is held, the balance after. The figures come from the dry run of
 * the very request the tool is about to send, or from the same rules the service applies (an
 * order's reserve); a request that would be refused is answered with its refusal and never asked.
 */

/**
 * A call of a route of the table with its parameters as the connection, in process: a read, or the
 * dry run of a POST (its body says dryRun). A refusal answers its status: the sentence then shows the id.
 */
export type Read = (route: AnyRoute, params: Record<string, string>, workspace: string | null, body?: unknown) => Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any

const cr = (n: unknown) => (typeof n === 'number' ? `${n.toLocaleString('en-US', { maximumFractionDigits: 2 })} credit${n === 1 ? '' : 's'}` : '? credits');
const num = (n: unknown) => (typeof n === 'number' ? n.toLocaleString('en-US', { maximumFractionDigits: 4 }) : '?');
const day = (d: unknown) => (typeof d === 'string' ? d.slice(0, 10) : '?');
const q = (s: unknown) => `“${String(s)}”`;

/** The remaining fields of a body, as "name: value" (ids stay ids; nothing is hidden). */
function fields(body: unknown, skip: string[] = []): string {
  if (!body || typeof body !== 'object') return '';
  const parts = Object.entries(body as Record<string, unknown>)
    .filter(([k, v]) => !skip.includes(k) && v !== undefined && k !== 'dryRun')
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
  return parts.join(', ').slice(0, 600);
}

async function workspaceName(read: Read, workspace: string | null): Promise<string> {
  const ws = await read(getWorkspacesCurrent, {}, workspace).catch(() => null);
  return ws?.status === 200 && ws.body?.name ? q(ws.body.name) : workspace ? q(workspace) : 'your default workspace';
}

async function metricNames(read: Read, workspace: string | null): Promise<Map<string, string>> {
  const res = await read(getMetrics, {}, workspace).catch(() => null);
  const out = new Map<string, string>();
  if (res?.status === 200 && Array.isArray(res.body)) for (const m of res.body) out.set(m.id, m.name);
  return out;
}

/** The books a creation would open, one line each: metric, branch, date, subsidy. */
function booksLine(books: any[], names: Map<string, string>, newName?: string): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (!books.length) return 'it opens no book';
  const shown = books.slice(0, 12).map((b) => `${q(names.get(b.metricId) ?? newName ?? b.metricId)}${b.branch ? ` (${b.branch})` : ''} for ${day(b.targetDate)}: ${cr(b.subsidy)}`);
  return `it opens ${books.length} book${books.length === 1 ? '' : 's'}, subsidy per book: ${shown.join('; ')}${books.length > 12 ? `; and ${books.length - 12} more` : ''}`;
}

export interface Asked {
  message: string;
  /** The request would be refused (its dry run, or what it needs and the caller lacks): answered as is, never asked. */
  refusal?: Record<string, unknown>;
}

/** A refusal in the API's shape, for a request the confirmation found would be refused. */
const refusal = (code: 'insufficient_balance' | 'validation_failed', sentence: string, details?: Record<string, unknown>) => new DomainError(code, sentence, details).toBody();

/** The answer of a read that refused: the real request would meet the same refusal. */
const refusedBy = (res: { status: number; body: any } | null): Record<string, unknown> | undefined => // eslint-disable-line @typescript-eslint/no-explicit-any
  res && res.status >= 400 && res.body && typeof res.body === 'object' ? (res.body as Record<string, unknown>) : undefined;

/** A participant by name: the nickname they chose (the id is what the host sent, never what the person reads). */
async function personName(read: Read, id: string, workspace: string | null): Promise<{ name: string; found: boolean; res: { status: number; body: any } | null }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = id ? await read(getAgentsById, { id }, workspace).catch(() => null) : null;
  return res?.status === 200 ? { name: q(res.body.nickname ?? res.body.name), found: true, res } : { name: 'a participant who was not found', found: false, res };
}

/** The caller's balance in credits (null when it cannot be read). */
async function myBalance(read: Read, workspace: string | null): Promise<number | null> {
  const res = await read(getAgentsByIdBalance, { id: 'me' }, workspace).catch(() => null);
  return res?.status === 200 && typeof res.body?.balance === 'number' ? res.body.balance : null;
}

/** A book as a person names it: its title or metric, its branch, its date. */
const bookName = (mk: any) => `${q(mk.title || mk.metricName)}${mk.branch ? ` (${mk.branch} branch)` : ''} for ${day(mk.targetDate)}`; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Short of credits: the sentence and the refusal the real request would get. */
function shortOf(need: number, balance: number, what: string): Record<string, unknown> {
  return refusal('insufficient_balance', `Not enough credits: ${what} needs ${cr(need)} and your balance is ${cr(balance)}. Nothing was asked or sent.`, { needed: need, balance });
}

/**
 * A limit order as the lane will place it (services/trading placeOrder): the limit as a price per
 * share, the shares it buys at most, and the reserve it moves out of the balance (the most it can
 * spend: what fills at once is paid from it, the rest is held until filled, cancelled or expired).
 */
function orderFigures(body: Record<string, any>, mk: any): { price: number; shares: number; reserve: number } { // eslint-disable-line @typescript-eslint/no-explicit-any
  const p = orderProbability(Number(body.limit), mk.rangeMin, mk.rangeMax);
  const priceNano = ownerPriceNano(body.direction, p);
  const size = body.shares !== undefined ? toNano(Number(body.shares)) : (toNano(Number(body.amount)) * NANO) / priceNano;
  return { price: toCredits(priceNano), shares: toCredits(size), reserve: toCredits(reserveFor(size, priceNano)) };
}

/** The confirmation of one call, in sentences; or the refusal the call would meet. */
export async function confirmationText(
  who: string,
  tool: Tool,
  askType: string,
  call: { path: string; body: unknown; workspace: string | null; params: Record<string, unknown>; self: string },
  read: Read,
): Promise<Asked> {
  const body = (call.body ?? {}) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const because = `(asked because of “${askType}”)`;
  // Credits belong to the account, not to a workspace: moving them names none.
  if (tool.name === 'transfer') {
    const quote = await read(tool.route, {}, null, { ...body, dryRun: true }).catch(() => null);
    if (refusedBy(quote) || !quote) return { message: '', refusal: refusedBy(quote) ?? refusal('validation_failed', 'The transfer could not be checked: nothing was asked or sent.') };
    const ok = quote.body;
    if (ok.affordable === false) return { message: '', refusal: shortOf(ok.amount, ok.balance, 'this transfer') };
    return { message: `${who} wants to transfer ${cr(ok.amount)} from your balance to ${q(ok.toNickname)}${body.memo ? ` with the memo ${q(body.memo)}` : ''} ${because}; your balance after: ${cr(ok.balanceAfter)}. Go ahead?` };
  }
  if (tool.name === 'withdraw') {
    const quote = await read(tool.route, { id: 'me' }, null, { ...body, dryRun: true }).catch(() => null);
    if (refusedBy(quote) || !quote) return { message: '', refusal: refusedBy(quote) ?? refusal('validation_failed', 'The withdrawal could not be checked: nothing was asked or sent.') };
    const ok = quote.body;
    if (ok.affordable === false) return { message: '', refusal: shortOf(ok.amount, ok.balance, 'this withdrawal') };
    const wallet = String(ok.toAddress);
    return {
      message: `${who} wants to withdraw ${cr(ok.amount)} from your balance to your registered wallet ${wallet.slice(0, 6)}…${wallet.slice(-4)}${ok.review ? ' (it waits for the operator to approve it first)' : ''} ${because}; your balance after: ${cr(ok.balanceAfter)}. Go ahead?`,
    };
  }
  const where = await workspaceName(read, call.workspace);
  const head = `${who} wants to ${tool.title} in ${where} ${because}`;
  let quote: { status: number; body: any } | null = null; // eslint-disable-line @typescript-eslint/no-explicit-any
  // transfer's and withdraw's dry runs are read in their own branches above.
  if (tool.dryRun) {
    quote = await read(tool.route, {}, call.workspace, { ...body, dryRun: true }).catch(() => null);
    if (refusedBy(quote)) return { message: '', refusal: refusedBy(quote) };
  }
  const ok = quote && quote.status < 400 ? quote.body : null;

  if (tool.name === 'trade') {
    const mk = ok?.marketId ? await read(getPredictionsMarketsById, { id: String(ok.marketId) }, call.workspace).catch(() => null) : null;
    const book = mk?.status === 200 ? bookName(mk.body) : q(body.marketId ?? body.metric ?? 'the book');
    if (ok && ok.affordable === false && ok.cost !== undefined) return { message: '', refusal: shortOf(ok.cost, ok.balance, `this trade on ${book}`) };
    const direction = body.direction ?? ok?.direction ?? '?';
    const after = ok && typeof ok.balance === 'number' ? ok.balance - (ok.cost ?? 0) + (ok.proceeds ?? 0) : null;
    const figures = ok
      ? `${ok.cost !== undefined ? `cost ${cr(ok.cost)}` : `proceeds ${cr(ok.proceeds)}`} for ${num(ok.shares)} shares; consensus ${num(ok.prevConsensus)} → ${num(ok.consensus)}; your balance ${cr(ok.balance)}, after: ${cr(after)}`
      : fields(body, ['marketId', 'direction']);
    return { message: `${head}: ${direction} on ${book}: ${figures}. Go ahead?` };
  }
  if (tool.name === 'place_order') {
    // The book the order names (marketId, or metric and date), resolved and checked tradable by the trade's dry run.
    const probe = await read(postPredictionsTrade, {}, call.workspace, { ...marketRefOf(body), direction: body.direction, amount: 1, dryRun: true }).catch(() => null);
    if (refusedBy(probe)) return { message: '', refusal: refusedBy(probe) };
    const mk = probe?.body?.marketId ? await read(getPredictionsMarketsById, { id: String(probe.body.marketId) }, call.workspace).catch(() => null) : null;
    if (refusedBy(mk) || !mk) return { message: '', refusal: refusedBy(mk) ?? refusal('validation_failed', 'The order names no book this connection can read.') };
    let f: ReturnType<typeof orderFigures>;
    try {
      f = orderFigures(body, mk.body);
    } catch (err) {
      if (err instanceof DomainError) return { message: '', refusal: err.toBody() };
      throw err;
    }
    const balance = typeof probe!.body.balance === 'number' ? (probe!.body.balance as number) : null;
    if (balance !== null && f.reserve > balance) return { message: '', refusal: shortOf(f.reserve, balance, `this order on ${bookName(mk.body)}`) };
    const until = body.expiresAt ? `until ${String(body.expiresAt).slice(0, 16).replace('T', ' ')} UTC` : 'until it fills or you cancel it';
    return {
      message: `${head}: a limit order to buy ${body.direction} on ${bookName(mk.body)} at ${num(Number(body.limit))} (${cr(f.price)} a share), up to ${num(f.shares)} shares; ${cr(f.reserve)} reserved from your balance now (what fills at once is paid from it; the rest stays held ${until}); your balance after: ${cr(balance === null ? null : balance - f.reserve)}. Go ahead?`,
    };
  }
  if (tool.name === 'open_market') {
    const metric = await read(getMetricsById, { id: String(body.metricId ?? '') }, call.workspace).catch(() => null);
    if (refusedBy(metric)) return { message: '', refusal: refusedBy(metric) };
    const ws = await read(getWorkspacesCurrent, {}, call.workspace).catch(() => null);
    const cost = typeof body.liquidity === 'number' ? body.liquidity : (metric?.body?.liquidityCredits ?? ws?.body?.defaultLiquidityCredits ?? null);
    const balance = await myBalance(read, call.workspace);
    if (typeof cost === 'number' && balance !== null && cost > balance) return { message: '', refusal: shortOf(cost, balance, 'opening this book') };
    const name = `${q(metric?.body?.name ?? body.metricId)} for ${body.targetDate}${body.title ? ` titled ${q(body.title)}` : ''}`;
    const paid = cost === 0 ? 'it opens unfunded and costs nothing' : `it costs ${cr(cost)} of subsidy from your balance`;
    return { message: `${head}: open a book on ${name}; ${paid}; your balance after: ${cr(balance === null || typeof cost !== 'number' ? null : balance - cost)}. Go ahead?` };
  }
  if (tool.name === 'create_metric' || tool.name === 'propose') {
    const names = await metricNames(read, call.workspace);
    const what = tool.name === 'create_metric' ? `the metric ${q(body.name)}` : `the proposal ${q(body.title)}`;
    const payer = ok && ok.payerId !== call.self ? `the balance of ${(await personName(read, String(ok.payerId), call.workspace)).name}` : 'your balance';
    const cost = ok
      ? `${booksLine(ok.books ?? [], names, tool.name === 'create_metric' ? String(body.name) : undefined)}; in all ${cr(ok.subsidyNeeded)} from ${payer} (balance ${cr(ok.balance)}${ok.balanceCovers === false ? ', which does not cover it: the books stay unfunded' : `, after: ${cr(ok.balance - ok.subsidyNeeded)}`})`
      : fields(body);
    return { message: `${head}: ${what}; ${cost}. Go ahead?` };
  }
  if (tool.name === 'credit_member') {
    const to = await personName(read, String(call.params.id ?? ''), call.workspace);
    if (!to.found && refusedBy(to.res)) return { message: '', refusal: refusedBy(to.res) };
    const balance = await myBalance(read, call.workspace);
    const amount = Number(body.amount);
    return { message: `${head}: move ${cr(amount)} from your balance to ${to.name}${body.reason ? ` for ${q(body.reason)}` : ''}${balance === null ? '' : `; your balance after: ${cr(balance - amount)}`}. Go ahead?` };
  }
  if (tool.name.startsWith('delete_')) {
    const kind = tool.name.slice('delete_'.length);
    const id = String(call.params.id ?? '');
    const target = await (kind === 'workspace' ? read(getWorkspacesCurrent, {}, id) : read(kind === 'metric' ? getMetricsById : getGroupsById, { id }, call.workspace)).catch(() => null);
    const name = target?.status === 200 && target.body?.name ? q(target.body.name) : q(id);
    return { message: `${who} wants to delete the ${kind} ${name}${kind === 'workspace' ? '' : ` in ${where}`} ${because}; this cannot be undone. Go ahead?` };
  }
  const rest = [fields(call.params), fields(body)].filter(Boolean).join('; ');
  return { message: `${head}${rest ? `: ${rest}` : ''}. Go ahead?` };
}

/** The fields of a body that name a book (as POST /predictions/trade and /orders read them). */
function marketRefOf(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['marketId', 'metricId', 'metricName', 'targetDate', 'proposalId', 'branch']) if (body[k] !== undefined) out[k] = body[k];
  return out;
}

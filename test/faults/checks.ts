import type { Client } from 'pg';
import { probability } from '../../src/domain/lmsr';
import type { RequestRecord } from './client';

/**
 * The money-path checks, read straight from the test database in one REPEATABLE READ snapshot.
 * Plain SQL and a bigint replay in the test, so they do not depend on the service's modules (the
 * order check alone prices the replayed book with src/domain/lmsr, the pure market math).
 */

export const EXPECTED_REFUSALS = new Set([
  'insufficient_balance',
  'insufficient_shares',
  'price_moved',
  'trade_too_small',
  'market_resolved',
  'market_voided',
  'market_closed',
  'proposal_closed',
]);

export class Violations {
  readonly counts: Record<string, number> = {};
  readonly examples: Record<string, string[]> = {};

  add(check: string, example: string, n = 1): void {
    this.counts[check] = (this.counts[check] ?? 0) + n;
    const xs = (this.examples[check] ??= []);
    if (xs.length < 5) xs.push(example);
  }

  get total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  /**
   * Fails the test when any check was violated, with the counts and the first example of each in the
   * failure's own message: that message is in the run's closing summary, which a CI log cut in the
   * middle keeps (the printed report and log tails come earlier and may be cut).
   */
  expectNone(): void {
    if (!this.total) return;
    const first = Object.entries(this.examples).map(([check, xs]) => `${check}: ${(xs[0] ?? '').slice(-1500)}`);
    throw new Error(`violations ${JSON.stringify(this.counts)}\n${first.join('\n')}`);
  }
}

export interface TradeRow {
  id: string;
  seq: string;
  request_id: string | null;
  market_id: string;
  agent_id: string;
  kind: 'buy' | 'sell' | 'redeem';
  direction: 'higher' | 'lower' | null;
  shares: string;
  cost: string;
  probability_before: number;
  probability_after: number;
}

interface RequestRow {
  request_id: string;
  agent_id: string;
  idempotency_key: string | null;
  status: 'pending' | 'done' | 'failed';
  trade_id: string | null;
}

const big = (s: string | number | null | undefined) => BigInt(s ?? 0);

/** The 503 codes each kind of request may answer while the infrastructure blips (a kind not listed is not checked). */
const OWN_503: Partial<Record<RequestRecord['kind'], string[]>> = {
  trade: ['trade_pending', 'trade_not_applied', 'service_unavailable'],
  condensed: ['trade_pending', 'trade_not_applied', 'service_unavailable'],
  refresh: ['refresh_pending', 'service_unavailable'],
};

/** Client-side records: what each request ended with, against what the database holds. */
function checkRecords(v: Violations, records: RequestRecord[], requests: RequestRow[], trades: TradeRow[]): void {
  const byKey = new Map<string, RequestRow>();
  for (const r of requests) if (r.idempotency_key) byKey.set(`${r.agent_id}|${r.idempotency_key}`, r);
  const tradeById = new Map(trades.map((t) => [t.id, t]));
  const appliedByRequest = new Map<string, TradeRow[]>();
  for (const t of trades) if (t.request_id && t.kind !== 'redeem') appliedByRequest.set(t.request_id, [...(appliedByRequest.get(t.request_id) ?? []), t]);

  for (const rec of records) {
    // An infrastructure blip answers 503 (retryable) or nothing at all, never another 5xx.
    const bad5xx = Object.entries(rec.indefinite).filter(([why]) => /^5\d\d /.test(why) && !why.startsWith('503 '));
    if (bad5xx.length) v.add('server_errors', `${rec.method} ${rec.path} key=${rec.idempotencyKey ?? '-'} saw=${JSON.stringify(Object.fromEntries(bad5xx))}`);
    // Each retryable answer says when to come back (issue 66), and in its own route's words: a horizon pass is not a trade.
    const unpaced = Object.keys(rec.indefinite).filter((why) => /^503 /.test(why) && why.endsWith('(no Retry-After)'));
    if (unpaced.length) v.add('no_retry_after', `${rec.method} ${rec.path} saw=${JSON.stringify(rec.indefinite)}`);
    const own = OWN_503[rec.kind];
    const foreign = own ? Object.keys(rec.indefinite).filter((why) => /^503 /.test(why) && !own.includes(why.split(' ')[1])) : [];
    if (foreign.length) v.add('foreign_code', `${rec.method} ${rec.path} saw=${JSON.stringify(rec.indefinite)}`);
    if (rec.definiteAt === undefined) {
      v.add(rec.kind === 'trade' || rec.kind === 'condensed' ? 'stuck_keys' : 'stuck_requests', `${rec.method} ${rec.path} key=${rec.idempotencyKey ?? '-'} attempts=${rec.attempts} saw=${JSON.stringify(rec.indefinite)}`);
      continue;
    }
    if (rec.kind === 'decision') {
      // A retried decision may find it already taken by its own earlier attempt (409).
      if (rec.status !== 200 && !(rec.status === 409 && rec.attempts > 1)) v.add('decision_refused', `${rec.path} ${rec.status} ${JSON.stringify(rec.response)}`);
      continue;
    }
    if (rec.kind === 'refresh') {
      if (rec.status !== 200) v.add('refresh_refused', `${rec.path} ${rec.status} ${JSON.stringify(rec.response)}`);
      continue;
    }
    if (rec.kind === 'settle') {
      if (rec.status !== 200) v.add('settle_refused', `${rec.path} ${rec.status} ${JSON.stringify(rec.response)}`);
      continue;
    }
    if (rec.kind !== 'trade' && rec.kind !== 'condensed') continue;
    const row = byKey.get(`${rec.agentId}|${rec.idempotencyKey}`);
    const where = `key=${rec.idempotencyKey} agent=${rec.agentId} market=${rec.marketId}`;
    if (rec.status === 200) {
      if (!row || row.status !== 'done') {
        v.add('acknowledged_not_recorded', `${where}: request row ${row ? row.status : 'missing'}`);
        continue;
      }
      const applied = appliedByRequest.get(row.request_id) ?? [];
      if (applied.length !== 1) v.add('acknowledged_not_applied_once', `${where}: ${applied.length} applied trade rows for request ${row.request_id}`);
      if (rec.kind === 'trade') {
        const tradeId = rec.response?.tradeId as string | undefined;
        const t = tradeId ? tradeById.get(tradeId) : undefined;
        if (!t) v.add('acknowledged_trade_missing', `${where}: tradeId ${tradeId} has no trades row`);
        else if (t.request_id !== row.request_id) v.add('acknowledged_trade_wrong_request', `${where}: trade ${tradeId} belongs to request ${t.request_id}, the key to ${row.request_id}`);
      }
    } else {
      if (!EXPECTED_REFUSALS.has(rec.code ?? '')) v.add('unexpected_refusal', `${where}: ${rec.status} ${JSON.stringify(rec.response)}`);
      if (row?.status === 'done') v.add('refused_but_applied', `${where}: answered ${rec.status} ${rec.code} but request ${row.request_id} is done`);
    }
  }
}

function checkRequests(v: Violations, requests: RequestRow[], trades: TradeRow[]): void {
  const byId = new Map(requests.map((r) => [r.request_id, r]));
  for (const r of requests) if (r.status === 'pending') v.add('pending_request_rows', `request ${r.request_id} key=${r.idempotency_key} agent=${r.agent_id}`);
  const perRequest = new Map<string, { applied: TradeRow[]; redeems: number }>();
  for (const t of trades) {
    if (!t.request_id) {
      v.add('trade_without_request', `trade ${t.id}`);
      continue;
    }
    const e = perRequest.get(t.request_id) ?? { applied: [], redeems: 0 };
    if (t.kind === 'redeem') e.redeems += 1;
    else e.applied.push(t);
    perRequest.set(t.request_id, e);
  }
  for (const [requestId, e] of perRequest) {
    if (e.applied.length > 1) v.add('double_applied_requests', `request ${requestId}: ${e.applied.length} applied trade rows (${e.applied.map((t) => `${t.kind} ${t.direction} seq ${t.seq}`).join(', ')})`);
    if (e.redeems > 1 && e.redeems > e.applied.length) v.add('double_redeemed_requests', `request ${requestId}: ${e.redeems} redeem rows`);
    const r = byId.get(requestId);
    if (!r || r.status !== 'done') v.add('applied_without_done_request', `request ${requestId}: row ${r ? r.status : 'missing'}, ${e.applied.length} applied`);
    else if (e.applied.length === 1 && r.trade_id && r.trade_id !== e.applied[0].id) v.add('stored_outcome_names_another_trade', `request ${requestId}: outcome ${r.trade_id}, row ${e.applied[0].id}`);
  }
}

/** The ledger invariant of src/services/ledger.ts (checkLedgerInvariant), as plain SQL. */
async function checkLedger(v: Violations, c: Client): Promise<void> {
  const [t] = (await c.query(`SELECT coalesce(sum(balance), 0)::text AS total FROM accounts`)).rows;
  if (BigInt(t.total) !== 0n) v.add('ledger_total_nonzero', `sum of balances ${t.total}`);
  const mism = await c.query(
    `SELECT a.id, a.balance::text AS balance, coalesce(e.s, 0)::text AS rows FROM accounts a
       LEFT JOIN (SELECT account_id, sum(amount) AS s FROM ledger_entries GROUP BY account_id) e ON e.account_id = a.id
      WHERE a.balance <> coalesce(e.s, 0)`,
  );
  for (const r of mism.rows) v.add('ledger_account_mismatch', `${r.id}: balance ${r.balance}, rows ${r.rows}`);
  const unb = await c.query(`SELECT transfer_id, sum(amount)::text AS s FROM ledger_entries GROUP BY transfer_id HAVING sum(amount) <> 0`);
  for (const r of unb.rows) v.add('ledger_unbalanced_transfer', `${r.transfer_id}: ${r.s}`);
  const neg = await c.query(`SELECT id, kind, balance::text AS balance FROM accounts WHERE kind IN ('participant','pool') AND balance < 0`);
  for (const r of neg.rows) v.add('negative_balance', `${r.id}: ${r.balance}`);
}

/** Books and positions against a replay of the trades in commit (seq) order. */
async function checkReplay(v: Violations, c: Client, trades: TradeRow[]): Promise<void> {
  const markets = (
    await c.query(
      `SELECT m.id, m.status, m.funded, m.liquidity::text, m.q0_higher::text, m.q0_lower::text, m.q_higher::text, m.q_lower::text,
              m.trade_count, m.volume::text, a.balance::text AS pool
         FROM markets m LEFT JOIN accounts a ON a.id = 'pool:' || m.id`,
    )
  ).rows;
  const positions = (await c.query(`SELECT market_id, agent_id, shares_higher::text, shares_lower::text, net_cost::text FROM positions`)).rows;
  const byMarket = new Map<string, TradeRow[]>();
  for (const t of trades) byMarket.set(t.market_id, [...(byMarket.get(t.market_id) ?? []), t]);

  for (const m of markets) {
    const rows = byMarket.get(m.id) ?? [];
    let qh = big(m.q0_higher);
    let ql = big(m.q0_lower);
    let volume = 0n;
    let cash = 0n;
    let negative = false;
    for (const t of rows) {
      const s = big(t.shares);
      if (t.kind === 'redeem') {
        qh -= s;
        ql -= s;
      } else {
        const d = t.kind === 'buy' ? s : -s;
        if (t.direction === 'higher') qh += d;
        else ql += d;
        volume += big(t.cost) < 0n ? -big(t.cost) : big(t.cost);
      }
      cash += big(t.cost);
      if (qh < 0n || ql < 0n) negative = true;
    }
    if (negative) v.add('book_negative_quantity', `market ${m.id}`);
    if (qh !== big(m.q_higher) || ql !== big(m.q_lower)) v.add('book_replay_mismatch', `market ${m.id}: stored (${m.q_higher}, ${m.q_lower}), replayed (${qh}, ${ql}) over ${rows.length} trades`);
    if (Number(m.trade_count) !== rows.length) v.add('book_trade_count_mismatch', `market ${m.id}: trade_count ${m.trade_count}, ${rows.length} trade rows`);
    if (volume !== big(m.volume)) v.add('book_volume_mismatch', `market ${m.id}: volume ${m.volume}, replayed ${volume}`);
    if (m.status === 'resolved' || m.status === 'voided') {
      if (big(m.pool) !== 0n) v.add('settled_pool_not_empty', `market ${m.id} (${m.status}): pool ${m.pool}`);
    } else if (m.funded && big(m.pool) !== big(m.liquidity) + cash) {
      v.add('pool_balance_mismatch', `market ${m.id}: pool ${m.pool}, liquidity + trade cash = ${big(m.liquidity) + cash}`);
    }
  }

  const replayed = new Map<string, { h: bigint; l: bigint; cost: bigint; oversold: boolean }>();
  for (const t of trades) {
    const k = `${t.market_id}|${t.agent_id}`;
    const p = replayed.get(k) ?? { h: 0n, l: 0n, cost: 0n, oversold: false };
    const s = big(t.shares);
    if (t.kind === 'redeem') {
      p.h -= s;
      p.l -= s;
    } else {
      const d = t.kind === 'buy' ? s : -s;
      if (t.direction === 'higher') p.h += d;
      else p.l += d;
    }
    p.cost += big(t.cost);
    if (p.h < 0n || p.l < 0n) p.oversold = true;
    replayed.set(k, p);
  }
  const stored = new Map(positions.map((p) => [`${p.market_id}|${p.agent_id}`, p]));
  for (const [k, p] of replayed) {
    const s = stored.get(k);
    if (p.oversold) v.add('position_oversold', `${k}: the replay goes below zero shares`);
    if (!s) {
      v.add('position_missing', `${k}: trades but no position row`);
      continue;
    }
    if (big(s.shares_higher) !== p.h || big(s.shares_lower) !== p.l) v.add('position_replay_mismatch', `${k}: stored (${s.shares_higher}, ${s.shares_lower}), replayed (${p.h}, ${p.l})`);
    if (big(s.net_cost) !== p.cost) v.add('position_net_cost_mismatch', `${k}: stored ${s.net_cost}, replayed ${p.cost}`);
  }
  for (const [k, s] of stored) if (!replayed.has(k) && (big(s.shares_higher) !== 0n || big(s.shares_lower) !== 0n)) v.add('position_without_trades', k);
}

export interface BookStart {
  id: string;
  b: string;
  q0_higher: string;
  q0_lower: string;
}

/**
 * Per-market order: replaying a market's trades in seq (commit) order through the LMSR, each trade's
 * recorded probability before must be the replayed book's price at that point, and its probability
 * after the price once it is applied. A trade priced on a book that another trade had already moved
 * (two trades of one market at once, or applied in an order other than their seq) breaks the chain.
 * A pair redemption keeps the price (it moves both sides alike), so its row's place does not matter.
 */
export function checkOrder(v: Violations, books: BookStart[], trades: TradeRow[]): number {
  const byMarket = new Map<string, TradeRow[]>();
  for (const t of trades) byMarket.set(t.market_id, [...(byMarket.get(t.market_id) ?? []), t]);
  let checked = 0;
  for (const m of books) {
    const book = { qHigher: big(m.q0_higher), qLower: big(m.q0_lower), b: big(m.b) };
    if (book.b <= 0n) continue; // an unfunded book has no price and no trades
    for (const t of byMarket.get(m.id) ?? []) {
      const s = big(t.shares);
      if (t.kind === 'redeem') {
        book.qHigher -= s;
        book.qLower -= s;
        continue;
      }
      const before = probability(book);
      const d = t.kind === 'buy' ? s : -s;
      if (t.direction === 'higher') book.qHigher += d;
      else book.qLower += d;
      checked += 1;
      if (t.probability_before !== before) {
        v.add('market_order_broken', `market ${m.id} trade seq ${t.seq}: priced at p=${t.probability_before}, the book replayed in seq order stood at p=${before}`);
      } else if (t.probability_after !== probability(book)) {
        v.add('market_order_broken', `market ${m.id} trade seq ${t.seq}: left p=${t.probability_after}, the replay gives p=${probability(book)}`);
      }
    }
  }
  return checked;
}

/** The columns checkOrder needs, read in the caller's snapshot. */
export async function readOrderInputs(c: Client): Promise<{ books: BookStart[]; trades: TradeRow[] }> {
  const books: BookStart[] = (await c.query(`SELECT id, b::text AS b, q0_higher::text AS q0_higher, q0_lower::text AS q0_lower FROM markets`)).rows;
  return { books, trades: (await c.query(TRADES_SQL)).rows };
}

// Ordered by the bigint (t.seq), not by the text output column of the same name.
const TRADES_SQL = `SELECT t.id, t.seq::text AS seq, t.request_id, t.market_id, t.agent_id, t.kind, t.direction, t.shares::text AS shares, t.cost::text AS cost,
                           t.probability_before, t.probability_after FROM trades t ORDER BY t.seq`;

/**
 * No trade after a decision on a branch book the decision closed: its cut (decision_trade_seq) is the
 * highest trade seq on the books it locked, the ones still live then. A book settled before the
 * decision was not among them, so its trades may carry higher seqs than the cut.
 */
async function checkDecisions(v: Violations, c: Client): Promise<void> {
  const late = await c.query(
    `SELECT p.id, p.status, p.decision_trade_seq::text AS cut, t.seq::text AS seq, t.market_id
       FROM proposals p JOIN markets m ON m.proposal_id = p.id JOIN trades t ON t.market_id = m.id
      WHERE p.status <> 'pending' AND (m.resolved_at IS NULL OR m.resolved_at > p.decided_at)
        AND (p.decision_trade_seq IS NULL OR t.seq > p.decision_trade_seq)`,
  );
  for (const r of late.rows) v.add('trade_after_decision', `proposal ${r.id} (${r.status}, cut ${r.cut}): trade seq ${r.seq} on ${r.market_id}`);
}

export interface CheckResult {
  violations: Violations;
  counts: { trades: number; redeems: number; requestRows: number; markets: number; orderChecked: number };
}

export async function runChecks(c: Client, records: RequestRecord[]): Promise<CheckResult> {
  const v = new Violations();
  await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const { books, trades } = await readOrderInputs(c);
    const requests: RequestRow[] = (
      await c.query(`SELECT request_id, agent_id, idempotency_key, status, response->>'tradeId' AS trade_id FROM trade_requests`)
    ).rows;
    checkRecords(v, records, requests, trades);
    checkRequests(v, requests, trades);
    await checkLedger(v, c);
    await checkReplay(v, c, trades);
    await checkDecisions(v, c);
    const orderChecked = checkOrder(v, books, trades);
    const [{ n }] = (await c.query(`SELECT count(*)::int AS n FROM markets`)).rows;
    return {
      violations: v,
      counts: { trades: trades.filter((t) => t.kind !== 'redeem').length, redeems: trades.filter((t) => t.kind === 'redeem').length, requestRows: requests.length, markets: n, orderChecked },
    };
  } finally {
    await c.query('ROLLBACK');
  }
}

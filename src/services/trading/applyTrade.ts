import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { inTransaction } from '../../db/tx';
import { queryPipelined } from '../../db/prepared';
import { checkTradable, planTrade, type Holding } from '../../domain/trading';
import { accountId, leg, LedgerDraft, ledgerOutcome, lockAccountsCte, lockedAccounts } from '../ledger';
import { outboxFragment, type PendingEvent } from '../events';
import { bookOf, LOCK_BOOKS_SQL, rowToMarket, type MarketRow } from '../books';
import { fillAccountsSql, fillEffects, tradeBookCtes, openOrdersOf, openOrdersSql, wallQuery, wallsFrom, type OpenOrder, type TradeRowData } from '../books';
import { deserializeSpec, keyOfRequest, keyTakenOutcome, positionData, storedOutcome, tradeFigures, type TradeJobData } from './tradeRequests';
import type { TradeOutcome, TradeResult } from '../../domain/outcomes';
import { announceSql, hearCommitted, noticesParam, outcomeNotices } from './outcomeNotices';
import { markBatch } from './batchTimeline';

/**
 * The lane worker's entry: a batch of trade requests (one or more, in arrival order) applied in one
 * transaction, so one commit (one WAL flush) serves them all. Set-based (issue 29): the batch takes
 * every lock it can need up front (`lockBooks`, then the account locks in its one read, BATCH_OPEN),
 * reads everything its trades can read in that statement (positions, stored outcomes, the books'
 * open orders), prices every trade in memory in order (domain/trading and domain/lmsr, as one by
 * one, each trade seeing the ones before it), and
 * writes the lot in ONE statement: trades, ledger legs, book moves, positions, order fills,
 * outcomes and events, each a multi-row write from arrays, whatever the batch's size. A refusal
 * (recorded as an outcome) refuses only its own trade: its fills and legs are taken back in memory
 * before anything is written. A job that runs twice changes nothing: the read under the locks
 * returns a stored outcome. The batch writes each request's journal row with its Idempotency-Key
 * (the API writes none before it): a request whose key another request holds, stored or earlier in
 * the batch, is answered taken and writes nothing; one key sent to two lanes at once fails the later
 * batch's write on the key's unique index, and its job's next attempt reads the key taken. The batch is taken book by book (a stable sort keeps each book's
 * arrival order). No deadlock by construction: the locks are taken before any write, in one
 * global order. Business refusals are outcomes, not job failures. Outcomes come back in the order of `jobs`.
 */
export async function applyTradeBatch(deps: Deps, jobs: TradeJobData[], opts: { announce?: boolean } = {}): Promise<TradeOutcome[]> {
  const order = jobs.map((_, i) => i).sort((a, b) => (jobs[a].marketId < jobs[b].marketId ? -1 : jobs[a].marketId > jobs[b].marketId ? 1 : a - b));
  const requestIds = jobs.map((j) => j.requestId);
  const id = requestIds[0]; // the batch's job id (tradeBatches' send)
  markBatch(id, 'started');
  const outcomes = await inTransaction(deps.ds, async (m) => {
    const batch = await TradeBatch.open(m, jobs);
    markBatch(id, 'opened');
    const out: TradeOutcome[] = new Array(jobs.length);
    for (const i of order) {
      try {
        out[i] = batch.apply(jobs[i], deps.clock.now());
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        out[i] = batch.refuse(jobs[i], err);
      }
    }
    // The outcomes are announced by the write itself (delivered at commit): the API hears them there.
    // Unless the caller is this process's lane itself (tradeBatches' applyHere), which has them in hand.
    const notices = opts.announce === false ? [] : outcomeNotices(requestIds, out);
    markBatch(id, 'priced');
    await batch.write(m, notices, { commit: true });
    return out;
  }, { pipelined: true });
  markBatch(id, 'written');
  // Committed: this process's own callers hear the same outcomes now, not one backend's hop later.
  hearCommitted(deps, requestIds, outcomes);
  return outcomes;
}

/** One trade request applied on its own (as a batch of one). */
export async function applyTradeJob(deps: Deps, job: TradeJobData): Promise<TradeOutcome> {
  return (await applyTradeBatch(deps, [job]))[0];
}

/**
 * One trade inside the caller's transaction (a limit order that crosses the book): applied and
 * written, or refused by a DomainError with nothing written.
 */
export async function executeTrade(m: EntityManager, deps: Deps, job: TradeJobData): Promise<TradeOutcome> {
  const batch = await TradeBatch.open(m, [job]);
  const out = batch.apply(job, deps.clock.now());
  await batch.write(m);
  return out;
}

/**
 * LOCK_BOOKS: every lock a batch can need, in the order every writer takes them: books before accounts (a book's
 * lane jobs, order placement and resolution lock the book, then write the ledger), each kind sorted by
 * id. Books: one `ORDER BY id FOR UPDATE` statement (rows are locked in the order they come out, as the
 * ledger writer locks accounts). Accounts: each trader's, each book's pool, and, for a book with open
 * orders, its reserve and the orders' owners (`fillAccountsSql`: exact, since no order of a locked
 * book can be placed or closed by anyone else), so a fill's refund or redemption to an owner waits on
 * nothing new either. The accounts are locked by the batch's one read (BATCH_OPEN), which returns
 * their balances: the batch decides every ledger write on them (nobody else can move a locked balance).
 */
const LOCK_BOOKS = LOCK_BOOKS_SQL;

/**
 * A batch's one statement after its book locks: the account locks (sorted, with balances), then
 * what the locks protect: the positions its trades and fills can touch, stored outcomes, open orders.
 * Its snapshot may predate a wait for an account lock, and that is sound: every row it reads belongs
 * to a book this transaction already holds, and only a holder of the book's lock changes them (a
 * locked account row itself is read at its latest version).
 */
const BATCH_OPEN = `WITH ${lockAccountsCte('$1', fillAccountsSql('$2'))}
  SELECT
   (SELECT coalesce(json_agg(json_build_object('id', id, 'kind', kind, 'balance', balance)), '[]'::json) FROM locked_accounts) AS accounts,
   (SELECT coalesce(json_agg(json_build_object('m', p.market_id, 'a', p.agent_id, 'h', p.shares_higher::text, 'l', p.shares_lower::text)), '[]'::json)
      FROM positions p
     WHERE p.market_id = ANY($2::uuid[])
       AND (p.agent_id = ANY($3::text[]) OR p.agent_id IN (SELECT agent_id FROM limit_orders WHERE market_id = ANY($2::uuid[]) AND status = 'open'))) AS positions,
   (SELECT coalesce(json_agg(json_build_object('r', request_id, 's', status, 'b', response)), '[]'::json)
      FROM trade_requests WHERE request_id = ANY($4::text[]) AND status <> 'pending') AS priors,
   (SELECT coalesce(json_agg(json_build_object('a', t.agent_id, 'w', t.workspace_id, 'k', t.idempotency_key, 'r', t.request_id)), '[]'::json)
      FROM trade_requests t JOIN unnest($5::text[], $6::uuid[], $7::text[]) AS x(a, w, k)
        ON t.agent_id = x.a AND t.workspace_id = x.w AND t.idempotency_key = x.k) AS holders,
   ${openOrdersSql('$2')} AS orders`;

/** BATCH_OPEN's key parameters: each keyed request's agent, workspace and key. */
function keyColumns(jobs: readonly TradeJobData[]): [string[], string[], string[]] {
  const keyed = jobs.filter((j) => j.key);
  return [keyed.map((j) => j.agentId), keyed.map((j) => j.workspaceId), keyed.map((j) => j.key!)];
}

interface PositionState {
  marketId: string;
  agentId: string;
  workspaceId: string;
  holding: Holding;
  /** Net cost change to add (the row keeps its own). */
  netCost: bigint;
  /** Last written at (null: untouched by the batch). */
  at: Date | null;
}

/**
 * A taker's trade row, written out key by key in TradeRowData's order (as `fillEffects` writes the
 * fills'). Not `{ ...base, id, ... }`: V8 (Node 20) gives an object spread and then extended a hidden
 * class of its own, every time, in old space, so each trade left about 3 KB there for the next
 * mark-compact (issue 29 step 15, docs/decisions-log.md); one shape also keeps the batch write's reads monomorphic.
 */
function tradeRow(job: TradeJobData, mk: MarketRow, now: Date, f: Omit<TradeRowData, 'requestId' | 'marketId' | 'workspaceId' | 'agentId' | 'createdAt'>): TradeRowData {
  return { id: f.id, requestId: job.requestId, marketId: mk.id, workspaceId: mk.workspaceId, agentId: job.agentId, kind: f.kind, direction: f.direction,
    shares: f.shares, cost: f.cost, probabilityBefore: f.probabilityBefore, probabilityAfter: f.probabilityAfter, consensusBefore: f.consensusBefore,
    consensusAfter: f.consensusAfter, createdAt: now };
}

/** A book's move over the batch. */
interface BookMove {
  trades: number;
  volume: bigint;
  at: Date;
}

/**
 * A batch's state in memory between its read and its one write: books, balances (a ledger draft),
 * positions, open orders, and the rows to write, in the order they are produced.
 */
class TradeBatch {
  private readonly trades: TradeRowData[] = [];
  private readonly events: PendingEvent[] = [];
  private readonly requests = new Map<string, { agentId: string; workspaceId: string; key: string | null; hash: string | null; status: 'done' | 'failed'; response: unknown }>();
  private readonly moves = new Map<string, BookMove>();
  private readonly touchedOrders = new Map<string, Date>();

  private constructor(
    private readonly books: Map<string, MarketRow>,
    private readonly ledger: LedgerDraft,
    private readonly positions: Map<string, PositionState>,
    private readonly orders: Map<string, OpenOrder[]>,
    private readonly priors: Map<string, { status: string; response: Record<string, unknown> }>,
    /** Each Idempotency-Key of the batch's requests (keyOfRequest) and the request holding it. */
    private readonly holders: Map<string, string>,
  ) {}

  static async open(m: EntityManager, jobs: readonly TradeJobData[]): Promise<TradeBatch> {
    const markets = [...new Set(jobs.map((j) => j.marketId))].sort();
    const agents = [...new Set(jobs.map((j) => j.agentId))];
    const accountIds = [...new Set([...agents.map(accountId.agent), ...markets.map(accountId.pool)])];
    // One round trip: the book locks, then the read that takes the account locks (it needs nothing the first returns).
    const [bookRows, [opening]] = await queryPipelined(m, [
      { text: LOCK_BOOKS, values: [markets] },
      { text: BATCH_OPEN, values: [accountIds, markets, agents, jobs.map((j) => j.requestId), ...keyColumns(jobs)] },
    ]);
    const books = (bookRows as Record<string, unknown>[]).map(rowToMarket);
    const r = opening as {
      accounts: Array<{ id: string; kind: string; balance: string }>;
      positions: Array<{ m: string; a: string; h: string; l: string }>;
      priors: Array<{ r: string; s: string; b: Record<string, unknown> }>;
      holders: Array<{ a: string; w: string; k: string; r: string }>;
      orders: unknown;
    };
    const accounts = lockedAccounts(r.accounts);
    const positions = new Map<string, PositionState>();
    for (const p of r.positions) positions.set(`${p.m}|${p.a}`, { marketId: p.m, agentId: p.a, workspaceId: '', holding: { higher: BigInt(p.h), lower: BigInt(p.l) }, netCost: 0n, at: null });
    const orders = new Map<string, OpenOrder[]>(markets.map((id) => [id, []]));
    for (const o of openOrdersOf(r.orders)) orders.get(o.marketId)?.push(o);
    return new TradeBatch(
      new Map(books.map((b) => [b.id, b])),
      new LedgerDraft(accounts),
      positions,
      orders,
      new Map(r.priors.map((p) => [p.r, { status: p.s, response: p.b }])),
      new Map(r.holders.map((h) => [keyOfRequest(h.a, h.w, h.k), h.r])),
    );
  }

  private position(mk: MarketRow, agentId: string): PositionState {
    const key = `${mk.id}|${agentId}`;
    let p = this.positions.get(key);
    if (!p) this.positions.set(key, (p = { marketId: mk.id, agentId, workspaceId: mk.workspaceId, holding: { higher: 0n, lower: 0n }, netCost: 0n, at: null }));
    p.workspaceId = mk.workspaceId;
    return p;
  }

  /** Price and apply one trade in memory (after every trade before it); a DomainError refuses it with nothing kept. */
  apply(job: TradeJobData, now: Date): TradeOutcome {
    const prior = this.priors.get(job.requestId);
    if (prior && prior.status !== 'pending') return storedOutcome(prior.status, prior.response);
    if (job.key) {
      // The key goes to the first request of it (stored, or earlier in this batch), refused or not.
      const k = keyOfRequest(job.agentId, job.workspaceId, job.key);
      const holder = this.holders.get(k);
      if (holder && holder !== job.requestId) return keyTakenOutcome();
      this.holders.set(k, job.requestId);
    }
    const spec = deserializeSpec(job.spec);
    const mk = this.books.get(job.marketId);
    if (!mk || mk.workspaceId !== job.workspaceId) throw new DomainError('market_not_found', `Market "${job.marketId}" was not found in this workspace.`);
    const { sellOnly } = checkTradable(mk, now, spec.mode === 'sell');
    const pos = this.position(mk, job.agentId);
    const wq = wallQuery(mk, spec);
    const book = this.orders.get(mk.id) ?? [];
    const walls = wq ? wallsFrom(book, wq.wallSide, wq.bound, now) : [];
    const plan = planTrade({ book: bookOf(mk), rangeMin: mk.rangeMin, rangeMax: mk.rangeMax, holding: pos.holding, spec, sellOnly, walls, selfId: job.agentId });
    const agentAcc = accountId.agent(job.agentId);
    const poolAcc = accountId.pool(mk.id);
    const mark = this.ledger.mark();
    const fx = plan.fills.length
      ? fillEffects(mk, plan.fills, job.agentId, plan.probabilityAfter, now, (id) => book.find((o) => o.id === id)!, (a) => this.position(mk, a).holding)
      : null;
    let after: Map<string, bigint>;
    try {
      // The orders' side goes first (it pays into the pool the trade may draw on); a refusal of the
      // trade's own legs takes the fills back too, as the savepoint did.
      if (fx) this.ledger.apply(fx.ledger, { touch: [agentAcc], shortfall: 'internal' });
      const [from, to] = plan.kind === 'buy' ? [agentAcc, poolAcc] : [poolAcc, agentAcc];
      after = this.ledger.apply([leg(from, to, plan.cash, 'trade', mk.id), leg(poolAcc, agentAcc, plan.redeemed, 'redeem', mk.id)], { touch: [agentAcc, poolAcc] });
    } catch (err) {
      this.ledger.rollback(mark);
      throw err;
    }
    // Accepted: keep its effects.
    if (fx) {
      for (const o of fx.orders) {
        book[book.findIndex((x) => x.id === o.id)] = o;
        this.touchedOrders.set(o.id, now);
      }
      for (const p of fx.positions) {
        const st = this.position(mk, p.agentId);
        st.holding = { higher: p.higher, lower: p.lower };
        st.netCost += p.netCost;
        st.at = now;
      }
      this.trades.push(...fx.trades);
      this.events.push(...fx.events);
    }
    pos.holding = plan.holding;
    pos.netCost += plan.kind === 'buy' ? plan.cash - plan.redeemed : -plan.cash;
    pos.at = now;
    this.books.set(mk.id, { ...mk, qHigher: plan.book.qHigher, qLower: plan.book.qLower });
    const move = this.moves.get(mk.id) ?? { trades: 0, volume: 0n, at: now };
    this.moves.set(mk.id, { trades: move.trades + (plan.redeemed > 0n ? 2 : 1), volume: move.volume + plan.cash, at: now });
    const tradeId = randomUUID();
    const signedCost = plan.kind === 'buy' ? plan.cash : -plan.cash;
    this.trades.push(tradeRow(job, mk, now, { id: tradeId, kind: plan.kind, direction: plan.direction, shares: plan.shares, cost: signedCost,
      probabilityBefore: plan.probabilityBefore, probabilityAfter: plan.probabilityAfter, consensusBefore: plan.consensusBefore, consensusAfter: plan.consensusAfter }));
    if (plan.redeemed > 0n) {
      this.trades.push(tradeRow(job, mk, now, { id: randomUUID(), kind: 'redeem', direction: null, shares: plan.redeemed, cost: -plan.redeemed,
        probabilityBefore: plan.probabilityAfter, probabilityAfter: plan.probabilityAfter, consensusBefore: plan.consensusAfter, consensusAfter: plan.consensusAfter }));
    }
    this.events.push({
      workspaceId: mk.workspaceId,
      type: 'trade:executed',
      data: { marketId: mk.id, metricName: mk.metricName, agentId: job.agentId, direction: plan.direction, kind: plan.kind, cost: signedCost, newConsensus: plan.consensusAfter },
    });
    // As stored (JSON): no undefined fields.
    const body = JSON.parse(JSON.stringify({ v: 2, tradeId, ...tradeFigures(plan, mk), position: positionData(plan.holding), balance: after.get(agentAcc)!.toString() })) as TradeResult;
    this.record(job, 'done', body as unknown as Record<string, unknown>);
    return { ok: true, body };
  }

  /** A refused trade: its outcome, recorded with the batch's write (a request already done keeps its outcome). */
  refuse(job: TradeJobData, err: DomainError): TradeOutcome {
    const outcome: TradeOutcome = { ok: false, body: err.toBody() };
    this.record(job, 'failed', outcome.body);
    return outcome;
  }

  private record(job: TradeJobData, status: 'done' | 'failed', response: Record<string, unknown>) {
    this.requests.set(job.requestId, { agentId: job.agentId, workspaceId: job.workspaceId, key: job.key ?? null, hash: job.hash ?? null, status, response });
    // As a later twin in the batch reads it back from the journal: JSON (an applied trade's body already is).
    this.priors.set(job.requestId, { status, response: status === 'done' ? response : JSON.parse(JSON.stringify(response)) });
  }

  /**
   * The batch's one write: every row of every accepted trade and every outcome, gated on the ledger's
   * own check. `commit`: the transaction's COMMIT goes out with it (inTransaction's `pipelined`).
   */
  async write(m: EntityManager, notices: string[] = [], opts: { commit?: boolean } = {}): Promise<void> {
    if (!this.requests.size) {
      // Every request had its outcome already (a batch run again): only the announcement is left.
      const announce = notices.length ? [{ text: announceSql(1), values: [noticesParam(notices)] }] : [];
      if (announce.length || opts.commit) await queryPipelined(m, announce, opts);
      return;
    }
    const moves = [...this.moves];
    const orders = [...this.touchedOrders].map(([id, at]) => ({ o: [...this.orders.values()].flat().find((x) => x.id === id)!, at }));
    const positions = [...this.positions.values()].filter((p) => p.at);
    const requests = [...this.requests];
    const t = this.trades;
    const params: unknown[] = [
      moves.map(([id]) => id), // 1
      moves.map(([id]) => this.books.get(id)!.qHigher.toString()),
      moves.map(([id]) => this.books.get(id)!.qLower.toString()),
      moves.map(([, mv]) => mv.trades),
      moves.map(([, mv]) => mv.volume.toString()),
      moves.map(([, mv]) => mv.at), // 6
      orders.map((x) => x.o.id), // 7
      orders.map((x) => x.o.filled.toString()),
      orders.map((x) => x.o.spent.toString()),
      orders.map((x) => x.o.reserve.toString()),
      orders.map((x) => x.o.status),
      orders.map((x) => x.at), // 12
      positions.map((p) => p.marketId), // 13
      positions.map((p) => p.agentId),
      positions.map((p) => p.workspaceId),
      positions.map((p) => p.holding.higher.toString()),
      positions.map((p) => p.holding.lower.toString()),
      positions.map((p) => p.netCost.toString()),
      positions.map((p) => p.at), // 19
      t.map((x) => x.id), // 20
      t.map((x) => x.requestId),
      t.map((x) => x.marketId),
      t.map((x) => x.workspaceId),
      t.map((x) => x.agentId),
      t.map((x) => x.kind),
      t.map((x) => x.direction),
      t.map((x) => x.shares.toString()),
      t.map((x) => x.cost.toString()),
      t.map((x) => x.probabilityBefore),
      t.map((x) => x.probabilityAfter),
      t.map((x) => x.consensusBefore),
      t.map((x) => x.consensusAfter),
      t.map((x) => x.createdAt), // 33
      requests.map(([id]) => id), // 34
      requests.map(([, r]) => r.agentId),
      requests.map(([, r]) => r.workspaceId),
      requests.map(([, r]) => r.status),
      JSON.stringify(requests.map(([, r]) => r.response)), // one JSON array (json_array_elements below)
      requests.map(([, r]) => r.key),
      requests.map(([, r]) => r.hash), // 40
    ];
    const ledger = this.ledger.fragment(params.length + 1);
    params.push(...ledger.params);
    const outbox = outboxFragment(this.events, params.length + 1, ledger.ok);
    params.push(...outbox.params);
    params.push(noticesParam(notices));
    const noticesAt = params.length;
    const [[row]] = (await queryPipelined(m, [{
      text: `WITH ${ledger.ctes},
       ${tradeBookCtes(ledger.ok)},
       pu AS (
         INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost, updated_at)
         SELECT * FROM unnest($13::uuid[], $14::text[], $15::uuid[], $16::bigint[], $17::bigint[], $18::bigint[], $19::timestamptz[]) WHERE ${ledger.ok}
         ON CONFLICT (market_id, agent_id) DO UPDATE SET shares_higher = EXCLUDED.shares_higher, shares_lower = EXCLUDED.shares_lower,
                net_cost = positions.net_cost + EXCLUDED.net_cost, updated_at = EXCLUDED.updated_at),
       tr AS (
         INSERT INTO trades (id, request_id, market_id, workspace_id, agent_id, kind, direction, shares, cost,
                             probability_before, probability_after, consensus_before, consensus_after, created_at)
         SELECT * FROM unnest($20::uuid[], $21::text[], $22::uuid[], $23::uuid[], $24::text[], $25::text[], $26::text[], $27::bigint[], $28::bigint[],
                              $29::float8[], $30::float8[], $31::float8[], $32::float8[], $33::timestamptz[]) WHERE ${ledger.ok}),
       rq AS (
         INSERT INTO trade_requests (request_id, agent_id, workspace_id, status, response, idempotency_key, body_hash)
         SELECT * FROM ROWS FROM (unnest($34::text[]), unnest($35::text[]), unnest($36::uuid[]), unnest($37::text[]), json_array_elements($38::json), unnest($39::text[]), unnest($40::text[]))
          WHERE ${ledger.ok}
         ON CONFLICT (request_id) DO UPDATE SET status = EXCLUDED.status, response = EXCLUDED.response, job = NULL
          WHERE EXCLUDED.status = 'done' OR trade_requests.status <> 'done'),
       ${outbox.cte}
       SELECT ${ledger.outcome}, (${announceSql(noticesAt)} WHERE ${ledger.ok}) AS notices`,
      values: params,
    }], opts)) as [[{ ledger: { ok: boolean; before: Record<string, string> | null } }]];
    ledgerOutcome(ledger, row, 'internal'); // decided in memory on the locked balances: a refusal here is a bug
  }
}

import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { inTransaction } from '../../db/tx';
import { queryPrepared } from '../../db/prepared';
import { checkTradable, planTrade, type Holding, type TradePlan } from '../../domain/trading';
import { accountId, leg, ledgerFragment, ledgerOutcome } from '../ledger';
import { outboxFragment } from '../events';
import { bookOf, lockMarket, MARKET_SELECT, rowToMarket, type MarketRow } from '../books';
import { applyFills, fillAccountsSql, wallQuery, wallsOf, wallsSql } from '../books';
import { deserializeSpec, positionData, recordFailure, storedOutcome, tradeFigures, type TradeJobData } from './tradeRequests';
import type { TradeOutcome, TradeResult } from '../../domain/outcomes';

/**
 * The lane worker's entry: a batch of trade requests (one or more, in arrival order) applied in one
 * transaction, so one commit (one WAL flush) serves them all. Each trade is three statements: its
 * book's row lock, a read that starts after it (the caller's holding, whether this request id
 * already applied, the walls it can meet), and a write (ledger, book, position, trade rows, event,
 * outcome) that applies only if the balance covers it. A refusal writes nothing before it is known
 * (a savepoint guards the one case that writes first: fills of resting orders), so it is recorded
 * in the same transaction and the batch goes on. A job that runs twice changes nothing: the read
 * under the lock returns a stored outcome. The batch is taken book by book (a stable sort keeps
 * each book's arrival order). No deadlock by construction (issue 29): before any trade, the batch
 * takes every lock it can need in one global order, its books (sorted by id, one statement), then
 * every account its trades and their fills can touch (sorted by id, one statement; see `lockBatch`),
 * so no later statement of the batch waits on another transaction while holding a lock. Business
 * refusals are outcomes, not job failures. Outcomes come back in the order of `jobs`.
 */
export async function applyTradeBatch(deps: Deps, jobs: TradeJobData[]): Promise<TradeOutcome[]> {
  const order = jobs.map((_, i) => i).sort((a, b) => (jobs[a].marketId < jobs[b].marketId ? -1 : jobs[a].marketId > jobs[b].marketId ? 1 : a - b));
  return inTransaction(deps.ds, async (m) => {
    const out: TradeOutcome[] = new Array(jobs.length);
    const locked = await lockBatch(m, jobs);
    for (const i of order) {
      try {
        out[i] = await executeTrade(m, deps, jobs[i], locked);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        out[i] = await recordFailure(m, jobs[i], err);
      }
    }
    return out;
  });
}

/**
 * Every lock a batch can need, in the order every writer takes them: books before accounts (a book's
 * lane jobs, order placement and resolution lock the book, then write the ledger), each kind sorted by
 * id. Books: one `ORDER BY id FOR UPDATE` statement (rows are locked in the order they come out, as the
 * ledger writer locks accounts). Accounts: each trader's, each book's pool, and, for a book with open
 * orders, its reserve and the orders' owners (`fillAccountsSql`: exact, since no order of a locked
 * book can be placed or closed by anyone else), so a fill's refund or redemption to an owner waits on
 * nothing new either. A lock taken twice in one transaction does not wait, so the per-trade
 * statements that follow (which lock the same rows again) never wait on another lane. The books
 * come back by id: a trade's statement then locks and reads its book in one go.
 */
async function lockBatch(m: EntityManager, jobs: readonly TradeJobData[]): Promise<Map<string, MarketRow>> {
  const markets = [...new Set(jobs.map((j) => j.marketId))].sort();
  const books = (await queryPrepared(m, `${MARKET_SELECT} WHERE mk.id = ANY($1::uuid[]) ORDER BY mk.id FOR UPDATE OF mk`, [markets])).map(rowToMarket);
  const accounts = [...new Set([...jobs.map((j) => accountId.agent(j.agentId)), ...markets.map((id) => accountId.pool(id))])];
  await queryPrepared(
    m,
    `WITH ids AS (SELECT unnest($1::text[]) AS id UNION ${fillAccountsSql('$2')})
     SELECT a.id FROM accounts a JOIN ids ON ids.id = a.id ORDER BY a.id FOR UPDATE OF a`,
    [accounts, markets],
  );
  return new Map(books.map((b) => [b.id, b]));
}

/** One trade request applied on its own (as a batch of one). */
export async function applyTradeJob(deps: Deps, job: TradeJobData): Promise<TradeOutcome> {
  return (await applyTradeBatch(deps, [job]))[0];
}

/** The caller's holding, this request's stored outcome and the walls a buy can meet ($1 market, $2 agent, $3 request, $4-$6 walls). */
const TRADE_READ = `p.shares_higher AS pos_higher, p.shares_lower AS pos_lower,
            tr.status AS prior_status, tr.response AS prior_response,
            CASE WHEN $4::text IS NULL THEN NULL ELSE ${wallsSql('$1', '$4', '$5', '$6')} END AS walls`;
const TRADE_READ_JOINS = `LEFT JOIN positions p ON p.market_id = $1 AND p.agent_id = $2
       LEFT JOIN trade_requests tr ON tr.request_id = $3`;

/**
 * `locked`: books this transaction already holds (by id, as first read), kept by the batch. The walls
 * a buy (or a target with a direction) meets depend only on fields no trade changes, so for a book
 * already held the lock and the read are one statement: no wait can come between them.
 */
export async function executeTrade(m: EntityManager, deps: Deps, job: TradeJobData, locked?: Map<string, MarketRow>): Promise<TradeOutcome> {
  const spec = deserializeSpec(job.spec);
  const now = deps.clock.now();
  const held = locked?.get(job.marketId);
  let mk: MarketRow | null;
  let row: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const readParams = (book: MarketRow) => {
    const wq = wallQuery(book, spec);
    return [job.marketId, job.agentId, job.requestId, wq?.wallSide ?? null, wq?.bound ?? null, now];
  };
  if (held && (spec.mode !== 'target' || spec.direction)) {
    const [r] = await queryPrepared(
      m,
      `SELECT mk.*, mt.name AS metric_name, ${TRADE_READ}
         FROM markets mk JOIN metrics mt ON mt.id = mk.metric_id
         ${TRADE_READ_JOINS}
        WHERE mk.id = $1 FOR UPDATE OF mk`,
      readParams(held),
    );
    mk = r ? rowToMarket(r) : null;
    row = r;
  } else {
    // Lock the book FIRST. Only a statement that starts after the lock is granted sees what the
    // previous holder committed (READ COMMITTED): a read joined to the locking statement would see the
    // position and the stored outcome as they were before the wait, and apply a request twice.
    mk = await lockMarket(m, job.marketId, true);
    // The resting orders a buy can meet come with the same read (none for a sell).
    row = mk ? (await queryPrepared(m, `SELECT ${TRADE_READ} FROM (SELECT 1) one ${TRADE_READ_JOINS}`, readParams(mk)))[0] : {};
  }
  if (!mk || mk.workspaceId !== job.workspaceId) throw new DomainError('market_not_found', `Market "${job.marketId}" was not found in this workspace.`);
  locked?.set(mk.id, mk);
  if (row.prior_status && row.prior_status !== 'pending') return storedOutcome(row.prior_status, row.prior_response);
  const { sellOnly } = checkTradable(mk, now, spec.mode === 'sell');
  const holding: Holding = { higher: BigInt(row.pos_higher ?? 0), lower: BigInt(row.pos_lower ?? 0) };
  const plan = planTrade({ book: bookOf(mk), rangeMin: mk.rangeMin, rangeMax: mk.rangeMax, holding, spec, sellOnly, walls: wallsOf(row.walls), selfId: job.agentId });
  if (!plan.fills.length) return writeTrade(m, job, mk, plan, now);
  // The orders' side of any fills goes first (the trade's own write stays one constant statement),
  // under a savepoint: a refusal after the fills must take them back, not the rest of the batch.
  await m.query('SAVEPOINT fills');
  try {
    await applyFills(m, mk, plan.fills, job.agentId, plan.probabilityAfter, now);
    const out = await writeTrade(m, job, mk, plan, now);
    await m.query('RELEASE SAVEPOINT fills');
    return out;
  } catch (err) {
    if (err instanceof DomainError) await m.query('ROLLBACK TO SAVEPOINT fills');
    throw err;
  }
}

async function writeTrade(m: EntityManager, job: TradeJobData, mk: MarketRow, plan: TradePlan, now: Date): Promise<TradeOutcome> {
  const tradeId = randomUUID();
  const agentAcc = accountId.agent(job.agentId);
  const poolAcc = accountId.pool(mk.id);
  const [from1, to1] = plan.kind === 'buy' ? [agentAcc, poolAcc] : [poolAcc, agentAcc];
  const signedCost = plan.kind === 'buy' ? plan.cash : -plan.cash;
  // The result as data (nano strings); the write statement fills in the balance after it.
  const body: Omit<TradeResult, 'balance'> = { v: 2, tradeId, ...tradeFigures(plan, mk), position: positionData(plan.holding) };
  const event = {
    marketId: mk.id,
    metricName: mk.metricName,
    agentId: job.agentId,
    direction: plan.direction,
    kind: plan.kind,
    cost: signedCost,
    newConsensus: plan.consensusAfter,
  };
  // The ledger legs and the event are built by their writers as fragments of this one statement:
  // the ledger part locks both accounts in id order and applies only if the caller can pay, and
  // every other part is gated on it.
  const ledger = ledgerFragment([leg(from1, to1, plan.cash, 'trade', mk.id), leg(poolAcc, agentAcc, plan.redeemed, 'redeem', mk.id)], 24, {
    touch: [agentAcc, poolAcc],
  });
  const outbox = outboxFragment([{ workspaceId: mk.workspaceId, type: 'trade:executed', data: event }], 24 + ledger.params.length, ledger.ok);
  const [w] = await queryPrepared<{ body: TradeResult; ledger: { ok: boolean; before: Record<string, string> | null } }>(
    m,
    `WITH ${ledger.ctes},
     mu AS (
       UPDATE markets SET q_higher = $4, q_lower = $5, trade_count = trade_count + $6, volume = volume + $2::bigint, last_trade_at = $7, updated_at = $7
        WHERE id = $1::uuid AND ${ledger.ok}),
     pu AS (
       INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost, updated_at)
       SELECT $1::uuid, $8, $9, $10, $11, $12, $7 WHERE ${ledger.ok}
       ON CONFLICT (market_id, agent_id) DO UPDATE SET shares_higher = $10, shares_lower = $11, net_cost = positions.net_cost + $12, updated_at = $7),
     tr AS (
       INSERT INTO trades (id, request_id, market_id, workspace_id, agent_id, kind, direction, shares, cost,
                           probability_before, probability_after, consensus_before, consensus_after, created_at)
       SELECT x.id, $13, $1::uuid, $9, $8, x.kind, x.direction, x.shares, x.cost, x.pb, $16, x.cb, $18, $7
         FROM (VALUES ($14::uuid, $15::text, $19::text, $20::bigint, $21::bigint, $17::float8, $22::float8),
                      (gen_random_uuid(), 'redeem', NULL, $3::bigint, -$3::bigint, $16::float8, $18::float8)) AS x(id, kind, direction, shares, cost, pb, cb)
        WHERE ${ledger.ok} AND (x.kind <> 'redeem' OR $3::bigint > 0)),
     resp AS (SELECT $23::jsonb || jsonb_build_object('balance', (${ledger.balanceAfter(agentAcc)})::text) AS body),
     ${outbox.cte},
     rq AS (
       INSERT INTO trade_requests (request_id, agent_id, workspace_id, status, response)
       SELECT $13, $8, $9, 'done', (SELECT body FROM resp) WHERE ${ledger.ok}
       ON CONFLICT (request_id) DO UPDATE SET status = 'done', response = EXCLUDED.response)
     SELECT (SELECT body FROM resp) AS body, ${ledger.outcome}`,
    [
      mk.id, // 1
      plan.cash.toString(), // 2
      plan.redeemed.toString(), // 3
      plan.book.qHigher.toString(), // 4
      plan.book.qLower.toString(), // 5
      plan.redeemed > 0n ? 2 : 1, // 6
      now, // 7
      job.agentId, // 8
      mk.workspaceId, // 9
      plan.holding.higher.toString(), // 10
      plan.holding.lower.toString(), // 11
      (plan.kind === 'buy' ? plan.cash - plan.redeemed : -plan.cash).toString(), // 12
      job.requestId, // 13
      tradeId, // 14
      plan.kind, // 15
      plan.probabilityAfter, // 16
      plan.probabilityBefore, // 17
      plan.consensusAfter, // 18
      plan.direction, // 19
      plan.shares.toString(), // 20
      signedCost.toString(), // 21
      plan.consensusBefore, // 22
      JSON.stringify(body), // 23
      ...ledger.params, // 24...
      ...outbox.params,
    ],
  );
  ledgerOutcome(ledger, w); // refuses with insufficient_balance (the write wrote nothing)
  return { ok: true, body: w.body };
}


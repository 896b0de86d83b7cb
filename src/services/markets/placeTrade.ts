import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { z } from 'zod';
import { tradeRequest } from '../../../jobs/definitions';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { inTransaction } from '../../db/tx';
import { queryPrepared } from '../../db/prepared';
import { planTrade, type Holding, type TradePlan, type TradeSpec } from '../../domain/trading';
import { maxBig, toCredits } from '../../domain/money';
import { accountId, balanceOf, leg, ledgerFragment, ledgerOutcome } from '../ledger';
import { outboxFragment } from '../events';
import { bookOf, findMarket, lockMarket, marketConsensus, requireMarket, rowToMarket, type MarketRow } from './books';
import { applyFills, presentFills, wallQuery, wallsOf, wallsSql } from './orders';
import { laneBatches, TRADE_JOB_OPTS } from './tradeBatches';

export type TradeJobData = z.infer<typeof tradeRequest>;

/** JSON-safe TradeSpec (bigints as decimal strings): the job payload's spec, typed by its zod schema. */
export type SerializedSpec = TradeJobData['spec'];

export function serializeSpec(s: TradeSpec): SerializedSpec {
  if (s.mode === 'buy') return { ...s, amount: s.amount.toString() };
  if (s.mode === 'target') return { ...s, maxBudget: s.maxBudget.toString() };
  return { ...s, shares: s.shares.toString() };
}
export function deserializeSpec(s: SerializedSpec): TradeSpec {
  if (s.mode === 'buy') return { ...s, amount: BigInt(s.amount) };
  if (s.mode === 'target') return { ...s, maxBudget: BigInt(s.maxBudget) };
  return { ...s, shares: BigInt(s.shares) };
}

/**
 * What a trade request came to: applied (the trade result) or refused (the error body, whose
 * catalog code gives the HTTP status at the edge). Stored in trade_requests, returned by the job.
 */
export type TradeOutcome = { ok: true; body: Record<string, unknown> } | { ok: false; body: Record<string, unknown> };

const storedOutcome = (status: string, response: Record<string, unknown>): TradeOutcome => ({ ok: status === 'done', body: response });

/** Refusals that depend on the book's state, shared by dry runs and real trades. */
export function checkTradable(mk: MarketRow, now: Date, isSell: boolean): { sellOnly: boolean } {
  // A decided (or past-deadline) proposal's branches answer proposal_closed, voided or not (spec §3.1).
  if (mk.proposalId && (mk.closeReason === 'proposal_closed' || (mk.tradingEndsAt && mk.tradingEndsAt <= now))) {
    throw new DomainError('proposal_closed', 'The proposal was decided or its deadline passed: this branch refuses buys and sells.');
  }
  if (mk.status === 'resolved') throw new DomainError('market_resolved', 'This market has resolved and accepts no trades.');
  if (mk.status === 'voided') throw new DomainError('market_voided', `This market was voided${mk.voidReason ? ` (${mk.voidReason})` : ''} and accepts no trades.`);
  if (!mk.funded || mk.b <= 0n) throw new DomainError('market_unfunded', 'This book has no liquidity yet; retry once someone funds it.');
  const sellOnly = mk.status === 'closed' || mk.closeReason !== null;
  if (sellOnly && !isSell) throw new DomainError('market_closed', 'This market is closed: it accepts only sells.');
  return { sellOnly };
}

async function holdingOf(m: EntityManager, marketId: string, agentId: string): Promise<Holding> {
  const rows = await m.query(
    `SELECT shares_higher, shares_lower FROM positions WHERE market_id = $1 AND agent_id = $2`,
    [marketId, agentId],
  );
  return rows.length ? { higher: BigInt(rows[0].shares_higher), lower: BigInt(rows[0].shares_lower) } : { higher: 0n, lower: 0n };
}

function positionView(h: Holding) {
  if (h.higher > 0n) return { direction: 'higher', shares: toCredits(h.higher) };
  if (h.lower > 0n) return { direction: 'lower', shares: toCredits(h.lower) };
  return { direction: null, shares: 0 };
}

function guardDetails(plan: TradePlan) {
  const out: Record<string, unknown> = {};
  if (plan.limited !== undefined) out.limited = plan.limited;
  if (plan.spent !== undefined) out.spent = toCredits(plan.spent);
  if (plan.unspent !== undefined) out.unspent = toCredits(plan.unspent);
  if (plan.sharesSold !== undefined) out.sharesSold = toCredits(plan.sharesSold);
  if (plan.sharesKept !== undefined) out.sharesKept = toCredits(plan.sharesKept);
  return out;
}

/** Price a trade without changing or recording anything; refuses what a real trade refuses. */
export async function dryRunTrade(deps: Deps, p: { agentId: string; workspaceId: string; marketId: string; spec: TradeSpec }) {
  const m = deps.ds.manager;
  const mk = requireMarket(await findMarket(m, p.workspaceId, p.marketId), p.marketId);
  const { sellOnly } = checkTradable(mk, deps.clock.now(), p.spec.mode === 'sell');
  const holding = await holdingOf(m, mk.id, p.agentId);
  const wq = wallQuery(mk, p.spec);
  const walls = wq ? wallsOf((await m.query(`SELECT ${wallsSql('$1', '$2', '$3', '$4')} AS walls`, [mk.id, wq.wallSide, wq.bound, deps.clock.now()]))[0].walls) : [];
  const plan = planTrade({ book: bookOf(mk), rangeMin: mk.rangeMin, rangeMax: mk.rangeMax, holding, spec: p.spec, sellOnly, walls, selfId: p.agentId });
  const balance = (await balanceOf(m, accountId.agent(p.agentId))) ?? 0n;
  const cost = plan.kind === 'buy' ? plan.cash : 0n;
  return {
    dryRun: true,
    marketId: mk.id,
    direction: plan.direction,
    shares: toCredits(plan.shares),
    ...(plan.kind === 'buy' ? { cost: toCredits(plan.cash) } : { proceeds: toCredits(plan.cash) }),
    redeemed: toCredits(plan.redeemed),
    probability: plan.probabilityAfter,
    consensus: plan.consensusAfter,
    prevConsensus: plan.consensusBefore,
    balance: toCredits(balance),
    affordable: balance >= cost,
    shortfall: toCredits(maxBig(cost - balance, 0n)),
    basis: { tradeCount: mk.tradeCount, liquidity: toCredits(mk.liquidity), consensus: marketConsensus(mk) },
    ...guardDetails(plan),
    ...(plan.kind === 'buy' ? { limitFills: presentFills(plan.fills, mk) } : {}),
  };
}

/** The stored outcome of a request id (null while pending or unknown), read without a lock. */
async function priorOutcome(deps: Deps, requestId: string): Promise<TradeOutcome | null> {
  const rows = await deps.ds.query(`SELECT status, response FROM trade_requests WHERE request_id = $1`, [requestId]);
  return rows.length && rows[0].status !== 'pending' ? storedOutcome(rows[0].status, rows[0].response) : null;
}

async function recordFailure(m: EntityManager | Deps['ds'], job: Pick<TradeJobData, 'requestId' | 'agentId' | 'workspaceId'>, err: DomainError): Promise<TradeOutcome> {
  const outcome: TradeOutcome = { ok: false, body: err.toBody() };
  await m.query(
    `INSERT INTO trade_requests (request_id, agent_id, workspace_id, status, response)
     VALUES ($1, $2, $3, 'failed', $4)
     ON CONFLICT (request_id) DO UPDATE SET status = 'failed', response = $4 WHERE trade_requests.status <> 'done'`,
    [job.requestId, job.agentId, job.workspaceId, JSON.stringify(outcome.body)],
  );
  return outcome;
}

/**
 * The lane worker's entry: a batch of trade requests (one or more, in arrival order) applied in one
 * transaction, so one commit (one WAL flush) serves them all. Each trade is three statements: its
 * book's row lock, a read that starts after it (the caller's holding, whether this request id
 * already applied, the walls it can meet), and a write (ledger, book, position, trade rows, event,
 * outcome) that applies only if the balance covers it. A refusal writes nothing before it is known
 * (a savepoint guards the one case that writes first: fills of resting orders), so it is recorded
 * in the same transaction and the batch goes on. A job that runs twice changes nothing: the read
 * under the lock returns a stored outcome. The batch is taken book by book (a stable sort keeps
 * each book's arrival order) so two batches never lock books in crossing orders. Business
 * refusals are outcomes, not job failures. Outcomes come back in the order of `jobs`.
 */
export async function applyTradeBatch(deps: Deps, jobs: TradeJobData[]): Promise<TradeOutcome[]> {
  const order = jobs.map((_, i) => i).sort((a, b) => (jobs[a].marketId < jobs[b].marketId ? -1 : jobs[a].marketId > jobs[b].marketId ? 1 : a - b));
  return inTransaction(deps.ds, async (m) => {
    const out: TradeOutcome[] = new Array(jobs.length);
    const locked = new Map<string, MarketRow>();
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
  const body = {
    tradeId,
    marketId: mk.id,
    kind: plan.kind,
    direction: plan.direction,
    shares: toCredits(plan.shares),
    ...(plan.kind === 'buy' ? { cost: toCredits(plan.cash) } : { proceeds: toCredits(plan.cash) }),
    redeemed: toCredits(plan.redeemed),
    consensus: plan.consensusAfter,
    prevConsensus: plan.consensusBefore,
    probability: plan.probabilityAfter,
    balance: null, // the write statement fills it from the updated balance
    position: positionView(plan.holding),
    ...guardDetails(plan),
    ...(plan.kind === 'buy' ? { limitFills: presentFills(plan.fills, mk) } : {}),
  };
  const event = {
    marketId: mk.id,
    metricName: mk.metricName,
    agentId: job.agentId,
    direction: plan.direction,
    kind: plan.kind,
    cost: toCredits(signedCost),
    newConsensus: plan.consensusAfter,
  };
  // The ledger legs and the event are built by their writers as fragments of this one statement:
  // the ledger part locks both accounts in id order and applies only if the caller can pay, and
  // every other part is gated on it.
  const ledger = ledgerFragment([leg(from1, to1, plan.cash, 'trade', mk.id), leg(poolAcc, agentAcc, plan.redeemed, 'redeem', mk.id)], 24, {
    touch: [agentAcc, poolAcc],
  });
  const outbox = outboxFragment([{ workspaceId: mk.workspaceId, type: 'trade:executed', data: event }], 24 + ledger.params.length, ledger.ok);
  const [w] = await queryPrepared<{ body: Record<string, unknown>; ledger: { ok: boolean; before: Record<string, string> | null } }>(
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
     resp AS (SELECT $23::jsonb || jsonb_build_object('balance', ${ledger.balanceAfter(agentAcc)}::numeric / 1000000000) AS body),
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
  return { ok: true, body: { ...w.body, balance: Number(w.body.balance) } };
}

export function bodyHash(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

async function pollOutcome(deps: Deps, requestId: string, ms: number): Promise<TradeOutcome | null> {
  const until = Date.now() + ms;
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    const o = await priorOutcome(deps, requestId);
    if (o) return o;
    if (Date.now() >= until) return null;
    await new Promise((res) => setTimeout(res, wait));
  }
}

function pending(requestId: string): DomainError {
  return new DomainError('trade_pending', 'The trade is queued but its outcome is not known yet; retry with the same Idempotency-Key to get it.', { requestId });
}

const replay = (o: TradeOutcome): TradeOutcome => (o.ok ? { ok: true, body: { ...o.body, idempotentReplay: true } } : o);

/**
 * Make sure a pending request has a live job: enqueue it again when its job is gone (lost with a
 * killed process or a Redis restart), or retry it when its job failed (every attempt hit a database
 * outage). Safe to call any number of times: the job id is the request id and the trade
 * transaction is a no-op for a request already applied.
 */
export async function ensureTradeJob(deps: Deps, data: TradeJobData): Promise<'present' | 'enqueued' | 'retried'> {
  const queue = deps.hub.queue(deps.hub.queueFor('trade', data.marketId));
  const existing = await queue.getJob(data.requestId);
  if (existing) {
    const state = await existing.getState();
    if (state === 'failed') {
      await existing.retry('failed');
      return 'retried';
    }
    if (state !== 'completed' && state !== 'unknown') return 'present';
    // Finished but the request is still pending: run it again (a no-op if it did apply).
    await existing.remove().catch(() => undefined);
  }
  await deps.hub.enqueue('trade', 'trade', { trades: [data] }, { jobId: data.requestId, laneKey: data.marketId, ...TRADE_JOB_OPTS });
  return 'enqueued';
}

export interface RecoverySummary {
  pending: number;
  requeued: number;
  failed: number;
}

/**
 * The recovery pass (at worker start and every few seconds): every request still pending after
 * `olderThanMs` gets a live job again, so no Idempotency-Key waits forever. A request stored
 * without its job (written before the journal existed) gets a definite failure instead, which
 * frees its key.
 */
export async function recoverPendingTrades(deps: Deps, olderThanMs: number, limit = 500): Promise<RecoverySummary> {
  const rows: Array<{ request_id: string; agent_id: string; workspace_id: string; job: unknown }> = await deps.ds.query(
    `SELECT request_id, agent_id, workspace_id, job FROM trade_requests
      WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1::float8 / 1000)
      ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit],
  );
  const out: RecoverySummary = { pending: rows.length, requeued: 0, failed: 0 };
  for (const r of rows) {
    const parsed = tradeRequest.safeParse(r.job);
    if (!parsed.success) {
      const lost = new DomainError('trade_not_applied', 'The trade was lost before it ran and nothing was applied; retry with the same Idempotency-Key to run it.');
      await recordFailure(deps.ds, { requestId: r.request_id, agentId: r.agent_id, workspaceId: r.workspace_id }, lost);
      out.failed++;
      continue;
    }
    if ((await ensureTradeJob(deps, parsed.data)) !== 'present') {
      out.requeued++;
      await deps.ds.query(`UPDATE trade_requests SET recovered_at = now() WHERE request_id = $1`, [r.request_id]);
    }
  }
  return out;
}

/**
 * The API's side: the request is journalled as pending with its job (so it can never be lost), with
 * its Idempotency-Key when it has one (scoped to participant and workspace), and goes on the
 * market's lane with the other requests batched for it (tradeBatches.ts); the API waits for its
 * outcome (from the batch's completion, else from Postgres). A key already journalled is replayed
 * (done), waited for (pending) or freed and run anew (failed: a refusal does not consume its key).
 */
export async function submitTrade(
  deps: Deps,
  p: { agentId: string; workspaceId: string; marketId: string; spec: TradeSpec; idempotencyKey?: string; hash: string },
): Promise<TradeOutcome> {
  const wait = deps.config.TRADE_WAIT_MS;
  const spec = serializeSpec(p.spec);
  for (let attempt = 0; ; attempt++) {
    const requestId = randomUUID();
    const sent = await laneBatches(deps).submit({ requestId, agentId: p.agentId, workspaceId: p.workspaceId, marketId: p.marketId, spec }, p.idempotencyKey, p.hash);
    if (sent.kind === 'outcome') return sent.outcome;
    if (sent.kind === 'unknown') {
      // Lost event, timeout or Redis away: Postgres is the truth (the journal row gets the job to run).
      const o = await pollOutcome(deps, sent.requestId, wait);
      if (!o) throw pending(sent.requestId);
      return o;
    }
    if (!p.idempotencyKey || attempt > 5) throw new Error('a trade request could not be journalled (request id taken)');
    const rows = await deps.ds.query(
      `SELECT request_id, body_hash, status, response, job FROM trade_requests WHERE agent_id = $1 AND workspace_id = $2 AND idempotency_key = $3`,
      [p.agentId, p.workspaceId, p.idempotencyKey],
    );
    if (!rows.length) continue; // freed meanwhile: journal it again
    const r = rows[0];
    if (r.body_hash !== p.hash) throw new DomainError('idempotency_key_reuse', 'This Idempotency-Key was already used with a different request body.');
    if (r.status === 'done') return replay(storedOutcome(r.status, r.response));
    if (r.status === 'pending') {
      // The client retries: give the request a live job first, in case its job was lost.
      const parsed = tradeRequest.safeParse(r.job);
      if (parsed.success) await ensureTradeJob(deps, parsed.data);
      const o = await pollOutcome(deps, r.request_id, wait * 2);
      if (!o) throw pending(r.request_id);
      if (o.ok) return replay(o);
    }
    // A failed call does not consume its key: clear it and run anew.
    await deps.ds.query(`DELETE FROM trade_requests WHERE request_id = $1 AND status = 'failed'`, [r.request_id]);
  }
}

import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../deps';
import { ApiError } from '../errors';
import { inTransaction, pgCode } from '../db/tx';
import { planTrade, type Holding, type TradePlan, type TradeSpec } from '../domain/trading';
import { maxBig, toCredits } from '../domain/money';
import { accountId, balanceOf, move } from './ledger';
import { bookOf, findMarket, lockMarket, marketConsensus, requireMarket, type MarketRow } from './markets';
import { emitEvent } from './outbox';

export interface TradeJobData {
  requestId: string;
  agentId: string;
  workspaceId: string;
  marketId: string;
  spec: SerializedSpec;
}

/** JSON-safe TradeSpec (bigints as decimal strings) for the job payload. */
export type SerializedSpec =
  | { mode: 'buy'; direction: 'higher' | 'lower'; amount: string; limit?: number }
  | { mode: 'target'; direction?: 'higher' | 'lower'; targetValue: number; maxBudget: string; limit?: number }
  | { mode: 'sell'; direction: 'higher' | 'lower'; shares: string; limit?: number };

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

export interface TradeOutcome {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Extension point for limit orders: resting walls an incoming buy may fill against before the
 * book. A later issue registers it; until then trades go straight to the market maker.
 */
export const tradeHooks: {
  beforeBook?: (m: EntityManager, mk: MarketRow, plan: TradePlan) => Promise<void>;
} = {};

/** Refusals that depend on the book's state, shared by dry runs and real trades. */
function checkTradable(mk: MarketRow, now: Date, isSell: boolean): { sellOnly: boolean } {
  // A decided (or past-deadline) proposal's branches answer proposal_closed, voided or not (spec §3.1).
  if (mk.proposalId && (mk.closeReason === 'proposal_closed' || (mk.tradingEndsAt && mk.tradingEndsAt <= now))) {
    throw new ApiError('proposal_closed', 'The proposal was decided or its deadline passed: this branch refuses buys and sells.');
  }
  if (mk.status === 'resolved') throw new ApiError('market_resolved', 'This market has resolved and accepts no trades.');
  if (mk.status === 'voided') throw new ApiError('market_voided', `This market was voided${mk.voidReason ? ` (${mk.voidReason})` : ''} and accepts no trades.`);
  if (!mk.funded || mk.b <= 0n) throw new ApiError('market_unfunded', 'This book has no liquidity yet; retry once someone funds it.');
  const sellOnly = mk.status === 'closed' || mk.closeReason !== null;
  if (sellOnly && !isSell) throw new ApiError('market_closed', 'This market is closed: it accepts only sells.');
  return { sellOnly };
}

async function holdingOf(m: EntityManager, marketId: string, agentId: string, lock: boolean): Promise<Holding> {
  const rows = await m.query(
    `SELECT shares_higher, shares_lower FROM positions WHERE market_id = $1 AND agent_id = $2${lock ? ' FOR UPDATE' : ''}`,
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
  const holding = await holdingOf(m, mk.id, p.agentId, false);
  const plan = planTrade({ book: bookOf(mk), rangeMin: mk.rangeMin, rangeMax: mk.rangeMax, holding, spec: p.spec, sellOnly });
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
  };
}

/** The trade itself, in the caller's transaction: market row locked first, then position, then balance. */
async function executeTrade(m: EntityManager, deps: Deps, job: TradeJobData): Promise<Record<string, unknown>> {
  const spec = deserializeSpec(job.spec);
  const mk = await lockMarket(m, job.marketId);
  if (!mk || mk.workspaceId !== job.workspaceId) throw new ApiError('market_not_found', `Market "${job.marketId}" was not found in this workspace.`);
  const now = deps.clock.now();
  const { sellOnly } = checkTradable(mk, now, spec.mode === 'sell');
  const holding = await holdingOf(m, mk.id, job.agentId, true);
  const plan = planTrade({ book: bookOf(mk), rangeMin: mk.rangeMin, rangeMax: mk.rangeMax, holding, spec, sellOnly });
  await tradeHooks.beforeBook?.(m, mk, plan);

  const agentAcc = accountId.agent(job.agentId);
  const poolAcc = accountId.pool(mk.id);
  let balance: bigint;
  if (plan.kind === 'buy') {
    balance = (await move(m, { from: agentAcc, to: poolAcc, amount: plan.cash, kind: 'trade', ref: mk.id })).fromBalance;
    if (plan.redeemed > 0n) balance = (await move(m, { from: poolAcc, to: agentAcc, amount: plan.redeemed, kind: 'redeem', ref: mk.id })).toBalance;
  } else {
    balance = (await move(m, { from: poolAcc, to: agentAcc, amount: plan.cash, kind: 'trade', ref: mk.id })).toBalance;
  }
  const netCostDelta = plan.kind === 'buy' ? plan.cash - plan.redeemed : -plan.cash;
  const trades = plan.redeemed > 0n ? 2 : 1;
  await m.query(
    `UPDATE markets SET q_higher = $2, q_lower = $3, trade_count = trade_count + $4, volume = volume + $5, last_trade_at = $6, updated_at = $6 WHERE id = $1`,
    [mk.id, plan.book.qHigher.toString(), plan.book.qLower.toString(), trades, plan.cash.toString(), now],
  );
  await m.query(
    `INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (market_id, agent_id) DO UPDATE SET shares_higher = $4, shares_lower = $5, net_cost = positions.net_cost + $6, updated_at = $7`,
    [mk.id, job.agentId, mk.workspaceId, plan.holding.higher.toString(), plan.holding.lower.toString(), netCostDelta.toString(), now],
  );
  const [trade] = await m.query(
    `INSERT INTO trades (request_id, market_id, workspace_id, agent_id, kind, direction, shares, cost,
                         probability_before, probability_after, consensus_before, consensus_after, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
    [
      job.requestId,
      mk.id,
      mk.workspaceId,
      job.agentId,
      plan.kind,
      plan.direction,
      plan.shares.toString(),
      (plan.kind === 'buy' ? plan.cash : -plan.cash).toString(),
      plan.probabilityBefore,
      plan.probabilityAfter,
      plan.consensusBefore,
      plan.consensusAfter,
      now,
    ],
  );
  if (plan.redeemed > 0n) {
    await m.query(
      `INSERT INTO trades (request_id, market_id, workspace_id, agent_id, kind, direction, shares, cost,
                           probability_before, probability_after, consensus_before, consensus_after, created_at)
       VALUES ($1, $2, $3, $4, 'redeem', NULL, $5, $6, $7, $7, $8, $8, $9)`,
      [job.requestId, mk.id, mk.workspaceId, job.agentId, plan.redeemed.toString(), (-plan.redeemed).toString(), plan.probabilityAfter, plan.consensusAfter, now],
    );
  }
  await emitEvent(m, mk.workspaceId, 'trade:executed', {
    marketId: mk.id,
    metricName: mk.metricName,
    agentId: job.agentId,
    direction: plan.direction,
    kind: plan.kind,
    cost: toCredits(plan.kind === 'buy' ? plan.cash : -plan.cash),
    newConsensus: plan.consensusAfter,
  });
  return {
    tradeId: trade.id,
    marketId: mk.id,
    kind: plan.kind,
    direction: plan.direction,
    shares: toCredits(plan.shares),
    ...(plan.kind === 'buy' ? { cost: toCredits(plan.cash) } : { proceeds: toCredits(plan.cash) }),
    redeemed: toCredits(plan.redeemed),
    consensus: plan.consensusAfter,
    prevConsensus: plan.consensusBefore,
    probability: plan.probabilityAfter,
    balance: toCredits(balance),
    position: positionView(plan.holding),
    ...guardDetails(plan),
  };
}

/**
 * The lane worker's entry: one transaction, a no-op when the request id was already applied
 * (a job may run twice). Business refusals are outcomes, not job failures.
 */
export async function applyTradeJob(deps: Deps, job: TradeJobData): Promise<TradeOutcome> {
  try {
    return await inTransaction(deps.ds, async (m) => {
      const prior = await m.query(`SELECT status, http_status, response FROM trade_requests WHERE request_id = $1 FOR UPDATE`, [job.requestId]);
      if (prior.length && prior[0].status !== 'pending') return { status: prior[0].http_status, body: prior[0].response };
      const body = await executeTrade(m, deps, job);
      await m.query(
        `INSERT INTO trade_requests (request_id, agent_id, workspace_id, status, http_status, response)
         VALUES ($1, $2, $3, 'done', 200, $4)
         ON CONFLICT (request_id) DO UPDATE SET status = 'done', http_status = 200, response = $4`,
        [job.requestId, job.agentId, job.workspaceId, JSON.stringify(body)],
      );
      return { status: 200, body };
    });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const outcome = { status: err.status, body: err.toBody() };
    await deps.ds.query(
      `INSERT INTO trade_requests (request_id, agent_id, workspace_id, status, http_status, response)
       VALUES ($1, $2, $3, 'failed', $4, $5)
       ON CONFLICT (request_id) DO UPDATE SET status = 'failed', http_status = $4, response = $5 WHERE trade_requests.status <> 'done'`,
      [job.requestId, job.agentId, job.workspaceId, outcome.status, JSON.stringify(outcome.body)],
    );
    return outcome;
  }
}

export function bodyHash(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

async function readOutcome(deps: Deps, requestId: string): Promise<{ status: string; outcome?: TradeOutcome } | null> {
  const rows = await deps.ds.query(`SELECT status, http_status, response FROM trade_requests WHERE request_id = $1`, [requestId]);
  if (!rows.length) return null;
  const r = rows[0];
  return r.status === 'pending' ? { status: 'pending' } : { status: r.status, outcome: { status: r.http_status, body: r.response } };
}

async function pollOutcome(deps: Deps, requestId: string, ms: number): Promise<TradeOutcome | null> {
  const until = Date.now() + ms;
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    const r = await readOutcome(deps, requestId);
    if (r?.outcome) return r.outcome;
    if (Date.now() >= until) return null;
    await new Promise((res) => setTimeout(res, wait));
  }
}

function pending(requestId: string): ApiError {
  return new ApiError('trade_pending', 'The trade is queued but its outcome is not known yet; retry with the same Idempotency-Key to get it.', { requestId }, 503);
}

const replay = (o: TradeOutcome): TradeOutcome => (o.status === 200 ? { status: 200, body: { ...o.body, idempotentReplay: true } } : o);

/**
 * The API's side: Idempotency-Key handling (scoped to participant and workspace), then the job on
 * the market's lane, then its outcome (from the completion event, else from Postgres).
 */
export async function submitTrade(
  deps: Deps,
  p: { agentId: string; workspaceId: string; marketId: string; spec: TradeSpec; idempotencyKey?: string; hash: string },
): Promise<TradeOutcome> {
  const wait = deps.config.TRADE_WAIT_MS;
  let requestId: string = randomUUID();
  if (p.idempotencyKey) {
    for (let attempt = 0; ; attempt++) {
      const rows = await deps.ds.query(
        `SELECT request_id, body_hash, status, http_status, response FROM trade_requests WHERE agent_id = $1 AND workspace_id = $2 AND idempotency_key = $3`,
        [p.agentId, p.workspaceId, p.idempotencyKey],
      );
      if (rows.length) {
        const r = rows[0];
        if (r.body_hash !== p.hash) {
          throw new ApiError('idempotency_key_reuse', 'This Idempotency-Key was already used with a different request body.');
        }
        if (r.status === 'done') return replay({ status: r.http_status, body: r.response });
        if (r.status === 'pending') {
          const o = await pollOutcome(deps, r.request_id, wait * 2);
          if (!o) throw pending(r.request_id);
          if (o.status === 200) return replay(o);
        }
        // A failed call does not consume its key: clear it and run anew.
        await deps.ds.query(`DELETE FROM trade_requests WHERE request_id = $1 AND status = 'failed'`, [r.request_id]);
      }
      try {
        await deps.ds.query(
          `INSERT INTO trade_requests (request_id, agent_id, workspace_id, idempotency_key, body_hash, status) VALUES ($1, $2, $3, $4, $5, 'pending')`,
          [requestId, p.agentId, p.workspaceId, p.idempotencyKey, p.hash],
        );
        break;
      } catch (err) {
        if (pgCode(err) !== '23505' || attempt > 5) throw err;
        requestId = randomUUID(); // a twin got there first: loop to wait for it and replay
      }
    }
  }
  const data: TradeJobData = { requestId, agentId: p.agentId, workspaceId: p.workspaceId, marketId: p.marketId, spec: serializeSpec(p.spec) };
  const queueName = deps.hub.queueFor('trade', p.marketId);
  const events = deps.hub.queueEvents(queueName);
  await events.waitUntilReady();
  const job = await deps.hub.enqueue('trade', 'trade', data, { jobId: requestId, laneKey: p.marketId, attempts: 3, backoff: { type: 'exponential', delay: 50 } });
  try {
    return (await job.waitUntilFinished(events, wait)) as TradeOutcome;
  } catch {
    // Lost event or timeout: Postgres is the truth.
    const o = await pollOutcome(deps, requestId, wait);
    if (!o) throw pending(requestId);
    return o;
  }
}

import { randomUUID } from 'node:crypto';
import { tradeRequest } from '../../../jobs/definitions';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { checkTradable, planTrade, type TradeSpec } from '../../domain/trading';
import { maxBig } from '../../domain/money';
import { accountId, balanceOf } from '../ledger';
import { bookOf, findMarket, marketConsensus, openOrdersOf, openOrdersSql, requireMarket, wallQuery, wallsFrom } from '../books';
import { laneBatches } from './tradeBatches';
import { ensureTradeJob } from './recoverTrades';
import { holdingOf, priorOutcome, replayIfSameRequest, serializeSpec, storedOutcome, tradeFigures, type StoredRequest } from './tradeRequests';
import type { TradeOutcome, TradeQuote } from '../../domain/outcomes';
import { firstRow, rows } from '../../db/queryRows';

/** The API's side of a trade: a dry run, or a request journalled, batched onto its lane and waited for. */

/** Price a trade without changing or recording anything; refuses what a real trade refuses. Nano data (presentTradeQuote). */
export async function dryRunTrade(deps: Deps, p: { agentId: string; workspaceId: string; marketId: string; spec: TradeSpec }): Promise<TradeQuote> {
  const m = deps.ds.manager;
  const mk = requireMarket(await findMarket(m, p.workspaceId, p.marketId), p.marketId);
  const { sellOnly } = checkTradable(mk, deps.clock.now(), p.spec.mode === 'sell');
  const holding = await holdingOf(m, mk.id, p.agentId);
  const wq = wallQuery(mk, p.spec);
  // The walls as the lane's batch selects them (same code), from the book's open orders.
  const walls = wq ? wallsFrom(openOrdersOf((await rows<{ orders: unknown }>(m, `SELECT ${openOrdersSql('$1')} AS orders`, [[mk.id]]))[0].orders), wq.wallSide, wq.bound, deps.clock.now()) : [];
  const plan = planTrade({ book: bookOf(mk), rangeMin: mk.rangeMin, rangeMax: mk.rangeMax, holding, spec: p.spec, sellOnly, walls, selfId: p.agentId });
  const balance = (await balanceOf(m, accountId.agent(p.agentId))) ?? 0n;
  const cost = plan.kind === 'buy' ? plan.cash : 0n;
  return {
    dryRun: true,
    ...tradeFigures(plan, mk),
    balance: balance.toString(),
    affordable: balance >= cost,
    shortfall: maxBig(cost - balance, 0n).toString(),
    basis: { tradeCount: mk.tradeCount, liquidity: mk.liquidity.toString(), consensus: marketConsensus(mk) },
  };
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

/** What the API answers: the outcome, and whether it repeats an earlier request with the same Idempotency-Key. */
export type TradeAnswer = TradeOutcome & { replay?: true };

const replay = (o: TradeOutcome): TradeAnswer => (o.ok ? { ...o, replay: true } : o);

/**
 * The API's side: the request goes on the market's lane with the other requests batched for it
 * (tradeBatches.ts), carrying its Idempotency-Key when it has one (scoped to participant and
 * workspace); its batch's transaction journals it with its outcome. The API waits for the outcome
 * (from the batch's notice, else from Postgres, where a request not heard in time is journalled
 * pending). A key another request holds is replayed (done), waited for (pending) or freed and run
 * anew (failed: a refusal does not consume its key).
 */
export async function submitTrade(
  deps: Deps,
  p: { agentId: string; workspaceId: string; marketId: string; spec: TradeSpec; idempotencyKey?: string; hash: string },
): Promise<TradeAnswer> {
  const wait = deps.config.TRADE_WAIT_MS;
  const spec = serializeSpec(p.spec);
  for (let attempt = 0; ; attempt++) {
    const requestId = randomUUID();
    const keyed = p.idempotencyKey ? { key: p.idempotencyKey, hash: p.hash } : {};
    const sent = await laneBatches(deps).submit({ requestId, agentId: p.agentId, workspaceId: p.workspaceId, marketId: p.marketId, spec, ...keyed });
    if (sent.kind === 'outcome') return sent.outcome;
    if (sent.kind === 'unknown') {
      // Lost event, timeout or Redis away: Postgres is the truth (the journal row gets the job to run).
      const o = await pollOutcome(deps, sent.requestId, wait);
      if (!o) throw pending(sent.requestId);
      return o;
    }
    if (!p.idempotencyKey || attempt > 5) throw new Error('a trade request was answered "key taken" without a key, or six times over');
    const r = await firstRow<StoredRequest>(
      deps.ds,
      `SELECT request_id, body_hash, status, response, job FROM trade_requests WHERE agent_id = $1 AND workspace_id = $2 AND idempotency_key = $3`,
      [p.agentId, p.workspaceId, p.idempotencyKey],
    );
    if (!r) continue; // freed meanwhile: journal it again
    const done = replayIfSameRequest({ bodyHash: r.body_hash }, p.hash, () => (r.status === 'done' ? replay(storedOutcome(r.status, r.response!)) : null));
    if (done) return done;
    if (r.status === 'pending') {
      // The client retries: give the request a live job first, in case its job was lost (a pending
      // row is written only after its batch was sent, so this cannot put it ahead of earlier requests).
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

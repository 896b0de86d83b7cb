import type { EntityManager } from 'typeorm';
import type { z } from 'zod';
import { tradeRequest } from '../../../jobs/definitions';
import type { Deps } from '../../deps';
import type { DomainError } from '../../errors';
import type { Fill } from '../../domain/orderBook';
import type { Holding, TradePlan, TradeSpec } from '../../domain/trading';
import type { MarketRow } from '../books';
import type { NanoString, TradeFigures, TradeOutcome, TradeResult } from '../../domain/outcomes';
import { firstRow } from '../../db/queryRows';

/** The trade journal (trade_requests) and the job payload: what the API side, the worker side and recovery share. */

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

const nano = (n: bigint): NanoString => n.toString();

/** A trade_requests row as read back: `response` (json) is null while pending, `job` (jsonb) the queued job's data. */
export interface StoredRequest {
  request_id: string;
  body_hash: string | null;
  status: 'pending' | 'done' | 'failed';
  response: Record<string, unknown> | null;
  job: unknown;
}

export const storedOutcome = (status: string, response: Record<string, unknown>): TradeOutcome =>
  status === 'done' ? { ok: true, body: response as unknown as TradeResult } : { ok: false, body: response };

export async function holdingOf(m: EntityManager, marketId: string, agentId: string): Promise<Holding> {
  const held = await firstRow<{ shares_higher: string; shares_lower: string }>(
    m,
    `SELECT shares_higher, shares_lower FROM positions WHERE market_id = $1 AND agent_id = $2`,
    [marketId, agentId],
  );
  return held ? { higher: BigInt(held.shares_higher), lower: BigInt(held.shares_lower) } : { higher: 0n, lower: 0n };
}

export function positionData(h: Holding): TradeResult['position'] {
  if (h.higher > 0n) return { direction: 'higher', shares: nano(h.higher) };
  if (h.lower > 0n) return { direction: 'lower', shares: nano(h.lower) };
  return { direction: null, shares: '0' };
}

export function fillsData(fills: readonly Fill[], mk: Pick<MarketRow, 'rangeMin' | 'rangeMax'>) {
  return fills.map((f) => ({ orderId: f.orderId, shares: nano(f.shares), price: mk.rangeMin + f.p * (mk.rangeMax - mk.rangeMin), cost: nano(f.takerPay) }));
}

/** The figures of a planned trade, shared by the applied trade and the dry run. */
export function tradeFigures(plan: TradePlan, mk: Pick<MarketRow, 'id' | 'rangeMin' | 'rangeMax'>): TradeFigures {
  const out: TradeFigures = {
    marketId: mk.id,
    kind: plan.kind,
    direction: plan.direction,
    shares: nano(plan.shares),
    cash: nano(plan.cash),
    redeemed: nano(plan.redeemed),
    consensus: plan.consensusAfter,
    prevConsensus: plan.consensusBefore,
    probability: plan.probabilityAfter,
  };
  if (plan.limited !== undefined) out.limited = plan.limited;
  if (plan.spent !== undefined) out.spent = nano(plan.spent);
  if (plan.unspent !== undefined) out.unspent = nano(plan.unspent);
  if (plan.sharesSold !== undefined) out.sharesSold = nano(plan.sharesSold);
  if (plan.sharesKept !== undefined) out.sharesKept = nano(plan.sharesKept);
  if (plan.kind === 'buy') out.limitFills = fillsData(plan.fills, mk);
  return out;
}

/**
 * The outcome a batch gives a keyed request whose Idempotency-Key another request holds (applied,
 * refused or pending): nothing is applied or recorded for it; the API answers from the holder.
 */
const KEY_TAKEN = 'idempotency_key_taken';
export const keyTakenOutcome = (): TradeOutcome => ({ ok: false, body: { code: KEY_TAKEN } });
export const isKeyTaken = (o: TradeOutcome): boolean => !o.ok && o.body.code === KEY_TAKEN;

/** An Idempotency-Key's scope and value as one map key (agent, workspace, key): how a batch finds a key's holder. */
export const keyOfRequest = (agentId: string, workspaceId: string, key: string): string => `${agentId}|${workspaceId.toLowerCase()}|${key}`;

/** The stored outcome of a request id (null while pending or unknown), read without a lock. */
export async function priorOutcome(deps: Deps, requestId: string): Promise<TradeOutcome | null> {
  const r = await firstRow<Pick<StoredRequest, 'status' | 'response'>>(deps.ds, `SELECT status, response FROM trade_requests WHERE request_id = $1`, [requestId]);
  return r && r.status !== 'pending' ? storedOutcome(r.status, r.response!) : null;
}

export async function recordFailure(m: EntityManager | Deps['ds'], job: Pick<TradeJobData, 'requestId' | 'agentId' | 'workspaceId'>, err: DomainError): Promise<TradeOutcome> {
  const outcome: TradeOutcome = { ok: false, body: err.toBody() };
  await m.query(
    `INSERT INTO trade_requests (request_id, agent_id, workspace_id, status, response)
     VALUES ($1, $2, $3, 'failed', $4)
     ON CONFLICT (request_id) DO UPDATE SET status = 'failed', response = $4, job = NULL WHERE trade_requests.status <> 'done'`,
    [job.requestId, job.agentId, job.workspaceId, JSON.stringify(outcome.body)],
  );
  return outcome;
}

/** A keyed request's body hash and the one check of a held key: the Idempotency-Key rules of every money write (services/idempotency). */
export { requestHash as bodyHash, replayIfSameRequest } from '../idempotency';


import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { HorizonError, parseTargetDate, type Period } from '../../domain/horizons';
import { DomainError, conflict, notFound } from '../../errors';
import { findMarket, lockMarket, openBooks, requireMarket, type MarketRow } from '../books';
import { accountId, balanceOf, insufficientBalance } from '../ledger';
import { runOnLane } from './lanes';
import { voidLockedMarket } from './resolveBook';
import { liveBaselineBooks, loadSpawnMetrics, openingValueFrom, plannedLiquidity } from './spawnBooks';

/**
 * POST /predictions/markets (spec §5.4: manage creates markets): a baseline book on a metric and a
 * target date outside the horizon plan, funded by the caller (liquidity 0 opens it unfunded, for
 * anyone to fund later). It opens where a planned book would (openingValueFrom) and is marked
 * manual, so the horizon pass never retires it. Refused: a date whose period has ended, a date with
 * a live baseline book already, a caller who cannot pay (nothing is created).
 */
export async function openManualMarket(
  deps: Pick<Deps, 'ds' | 'clock'>,
  input: { workspaceId: string; agentId: string; metricId: string; targetDate: string; liquidity: bigint | null; title: string | null },
): Promise<MarketRow> {
  const now = deps.clock.now();
  let period: Period;
  try {
    period = parseTargetDate(input.targetDate, now);
  } catch (err) {
    if (err instanceof HorizonError) throw new DomainError('validation_failed', `Invalid body field "targetDate": ${err.message.replace(/\.$/, '')}.`);
    throw err;
  }
  if (period.end && period.end.getTime() <= now.getTime()) {
    throw new DomainError('validation_failed', `The period of ${period.targetDate} ended at ${period.end.toISOString()}; a market opens on a date still to come.`);
  }
  return inTransaction(deps.ds, async (m) => {
    const [metric] = await loadSpawnMetrics(m, [input.metricId]);
    if (!metric || metric.workspaceId !== input.workspaceId) throw notFound(`Metric ${input.metricId}`);
    // Serialize with the horizon pass and other manual opens of this metric.
    await m.query(`SELECT 1 FROM metrics WHERE id = $1 FOR UPDATE`, [metric.id]);
    const live = await liveBaselineBooks(m, [metric.id]);
    const existing = live.find((b) => b.targetDate === period.targetDate);
    if (existing) throw conflict(`${metric.name} already has a live book for ${period.targetDate} (${existing.id}).`, { marketId: existing.id });
    const liquidity = input.liquidity ?? plannedLiquidity(metric, null);
    const [mk] = await openBooks(m, [
      {
        workspaceId: metric.workspaceId,
        metricId: metric.id,
        metricName: metric.name,
        period,
        horizonEntry: null,
        title: input.title ?? metric.marketTitle ?? null,
        funderId: input.agentId,
        liquidity,
        opensAtValue: openingValueFrom(metric, live),
        rangeMin: 0,
        rangeMax: metric.rangeMax,
        manual: true,
      },
    ]);
    if (!mk) throw conflict(`${metric.name} already has a live book for ${period.targetDate}.`);
    if (liquidity > 0n && !mk.funded) {
      throw insufficientBalance((await balanceOf(m, accountId.agent(input.agentId))) ?? 0n, liquidity, { purpose: 'to fund the book', note: 'Send liquidity 0 to open it unfunded.' });
    }
    return mk;
  });
}

/** The void job on the book's lane: a no-op for a book already resolved or voided. */
export async function voidBookNow(deps: Pick<Deps, 'ds' | 'clock'>, marketId: string, reason: string): Promise<{ marketId: string; voided: boolean; refunded: bigint }> {
  return inTransaction(deps.ds, async (m) => {
    const mk = await lockMarket(m, marketId);
    if (!mk || (mk.status !== 'open' && mk.status !== 'closed')) return { marketId, voided: false, refunded: 0n };
    const { refunded } = await voidLockedMarket(m, mk, reason, deps.clock.now());
    return { marketId, voided: true, refunded };
  });
}

function refuseEnded(mk: MarketRow): void {
  if (mk.status === 'resolved') throw new DomainError('market_resolved', `Market ${mk.id} has resolved; a resolved market cannot be voided.`);
  if (mk.status === 'voided') throw new DomainError('market_voided', `Market ${mk.id} was already voided (${mk.voidReason ?? 'no reason recorded'}).`);
}

/**
 * POST /predictions/markets/{id}/void (manage): void a baseline book with a reason, on its lane (so
 * it serializes with the book's trades): every position's net cost back, the pool's remainder to its
 * funders, resting orders cancelled. A proposal branch is voided by deciding its proposal instead.
 */
export async function voidMarketByHand(deps: Deps, input: { workspaceId: string; marketId: string; reason: string }): Promise<{ market: MarketRow; refunded: bigint }> {
  const mk = requireMarket(await findMarket(deps.ds, input.workspaceId, input.marketId), input.marketId);
  if (mk.proposalId) {
    throw conflict(`Market ${mk.id} is a branch of proposal ${mk.proposalId}; decline or withdraw the proposal to void its branches.`, { proposalId: mk.proposalId });
  }
  refuseEnded(mk);
  const r = await runOnLane(deps, 'void', { marketId: mk.id, reason: input.reason }, mk.id, `void-${mk.id}-${randomUUID()}`);
  if (!r) throw new DomainError('void_pending', 'The void is queued on the market’s lane but did not finish in time; it still runs.');
  const after = requireMarket(await findMarket(deps.ds, input.workspaceId, mk.id), mk.id);
  if (!r.voided) refuseEnded(after);
  return { market: after, refunded: r.refunded };
}

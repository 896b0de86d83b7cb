import type { EntityManager } from 'typeorm';
import { desiredHorizons, type TimePreference } from '../../domain/horizons';
import { consensusOf, probability } from '../../domain/lmsr';
import { toNano } from '../../domain/money';
import { costOfOpening, openBooks, type MarketRow, type OpenBookInput } from '../books';
import { accountId, withOneLedgerWrite } from '../ledger';
import { voidLockedMarket } from './resolveBook';
import { closeOrdersOf, setCloseReason } from '../books';
import { lockMarket } from '../books';
import { rows } from '../../db/queryRows';

export interface SpawnMetric {
  id: string;
  workspaceId: string;
  name: string;
  total: number | null;
  value: number;
  opensAt: number | null;
  rangeMax: number;
  liquidityCredits: bigint | null;
  timePreference: TimePreference | null;
  marketTitle: string | null;
  ownerId: string;
  defaultLiquidity: bigint;
}

/** A live baseline book, as much as the horizon pass needs. */
export interface LiveBook {
  id: string;
  metricId: string;
  targetDate: string;
  horizonEntry: string | null;
  tradeCount: number;
  periodEnd: Date | null;
  closeReason: string | null;
  consensus: number | null;
  lastTradeAt: Date | null;
  /** Opened by hand: never stale. */
  manual: boolean;
}

export async function loadSpawnMetrics(m: EntityManager, metricIds: string[]): Promise<SpawnMetric[]> {
  const found = await rows<{
    id: string;
    workspace_id: string;
    name: string;
    total: number | null;
    value: number;
    opens_at: number | null;
    market_range_max: number;
    liquidity_credits: string | null;
    time_preference: TimePreference | null;
    market_title: string | null;
    owner_id: string;
    default_liquidity: string;
  }>(
    m,
    `SELECT mt.id, mt.workspace_id, mt.name, mt.total, mt.value, mt.opens_at, mt.market_range_max, mt.liquidity_credits,
            mt.time_preference, mt.market_title, w.owner_id, w.default_liquidity
       FROM metrics mt JOIN workspaces w ON w.id = mt.workspace_id WHERE mt.id = ANY($1::uuid[]) ORDER BY mt.id`,
    [metricIds],
  );
  return found.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    total: r.total,
    value: r.value,
    opensAt: r.opens_at,
    rangeMax: r.market_range_max,
    liquidityCredits: r.liquidity_credits === null ? null : BigInt(r.liquidity_credits),
    timePreference: r.time_preference,
    marketTitle: r.market_title,
    ownerId: r.owner_id,
    defaultLiquidity: BigInt(r.default_liquidity),
  }));
}

export async function liveBaselineBooks(m: EntityManager, metricIds: string[]): Promise<LiveBook[]> {
  const found = await rows<{
    id: string;
    metric_id: string;
    target_date: string;
    horizon_entry: string | null;
    trade_count: number;
    period_end: Date | null;
    close_reason: string | null;
    funded: boolean;
    b: string;
    q_higher: string;
    q_lower: string;
    range_min: number;
    range_max: number;
    last_trade_at: Date | null;
    manual: boolean;
  }>(
    m,
    `SELECT id, metric_id, target_date, horizon_entry, trade_count, period_end, close_reason, funded, b, q_higher, q_lower, range_min, range_max, last_trade_at, manual
       FROM markets WHERE metric_id = ANY($1::uuid[]) AND proposal_id IS NULL AND status IN ('open','closed')`,
    [metricIds],
  );
  return found.map((r) => {
    const b = BigInt(r.b);
    const p = r.funded && b > 0n ? probability({ qHigher: BigInt(r.q_higher), qLower: BigInt(r.q_lower), b }) : null;
    return {
      id: r.id,
      metricId: r.metric_id,
      targetDate: r.target_date,
      horizonEntry: r.horizon_entry,
      tradeCount: r.trade_count,
      periodEnd: r.period_end,
      closeReason: r.close_reason,
      consensus: p === null ? null : consensusOf(p, r.range_min, r.range_max),
      lastTradeAt: r.last_trade_at,
      manual: r.manual === true,
    };
  });
}

/**
 * Where a new baseline book opens (spec §2.2 opensAt): a traded open book of the same metric
 * wins, then opensAt, then the metric's current reading.
 */
export function openingValueFrom(metric: SpawnMetric, live: LiveBook[]): number | null {
  const traded = live
    .filter((b) => b.tradeCount > 0 && b.consensus !== null && b.closeReason === null)
    .sort((a, b) => (b.lastTradeAt?.getTime() ?? 0) - (a.lastTradeAt?.getTime() ?? 0));
  if (traded.length) return traded[0].consensus;
  if (metric.opensAt !== null) return metric.opensAt;
  return metric.total ?? metric.value;
}

/**
 * What one metric's horizon pass must do: the desired books that are missing, and the live books
 * whose date is no longer desired and has not ended (stale). Books of rolling entries still listed
 * are never stale: they rolled, and await their reading.
 */
export function planHorizons(metric: SpawnMetric, live: LiveBook[], now: Date): { open: OpenBookInput[]; stale: LiveBook[] } {
  const desired = desiredHorizons(now, metric.timePreference);
  const liveDates = new Set(live.map((b) => b.targetDate));
  const wanted = new Set(desired.map((d) => d.period.targetDate));
  const entries = new Set(metric.timePreference?.enabled ? (metric.timePreference.customHorizons ?? []) : []);
  const stale = live.filter(
    (b) => !b.manual && b.closeReason === null && (b.periodEnd === null || b.periodEnd > now) && !wanted.has(b.targetDate) && !(b.horizonEntry && entries.has(b.horizonEntry)),
  );
  const missing = desired.filter((d) => !liveDates.has(d.period.targetDate));
  if (!missing.length) return { open: [], stale };
  const opensAt = openingValueFrom(metric, live);
  const open = missing.map((d): OpenBookInput => {
    return {
      workspaceId: metric.workspaceId,
      metricId: metric.id,
      metricName: metric.name,
      period: d.period,
      horizonEntry: d.entry,
      title: metric.timePreference?.horizonTitles?.[d.entry] ?? metric.marketTitle ?? null,
      funderId: metric.ownerId,
      liquidity: plannedLiquidity(metric, d.entry),
      opensAtValue: opensAt,
      rangeMin: 0,
      rangeMax: metric.rangeMax,
    };
  });
  return { open, stale };
}

/** A baseline book's subsidy (nano): its entry's horizonCredits.book, else the metric's liquidityCredits, else the workspace default. */
export function plannedLiquidity(metric: SpawnMetric, entry: string | null): bigint {
  const credit = entry === null ? undefined : metric.timePreference?.horizonCredits?.[entry]?.book;
  return credit !== undefined && credit !== null ? toNano(credit) : (metric.liquidityCredits ?? metric.defaultLiquidity);
}

/**
 * Retire stale books: untraded ones voided (pool back to the funder), traded ones closed to buys.
 * Every refund in one ledger statement after the book locks; `touch` names accounts a later write
 * of the transaction debits (the funders of the books opened next), locked in that statement too.
 */
export async function retireBooks(m: EntityManager, stale: LiveBook[], now: Date, touch: readonly string[] = []): Promise<{ deactivated: number; voided: number }> {
  return withOneLedgerWrite(
    m,
    async (legs) => {
      let deactivated = 0;
      let voided = 0;
      for (const b of [...stale].sort((x, y) => (x.id < y.id ? -1 : 1))) {
        const mk = await lockMarket(m, b.id);
        if (!mk || (mk.status !== 'open' && mk.status !== 'closed') || mk.closeReason) continue;
        if (mk.tradeCount === 0) {
          await voidLockedMarket(m, mk, 'horizon no longer desired', now, legs);
          voided++;
        } else {
          await setCloseReason(m, [mk.id], 'deactivated', now);
          // Closed to buys, so no wall there can fill: its resting orders go, reserves back.
          await closeOrdersOf(m, [mk.id], 'cancelled', 'market deactivated', now, legs);
          deactivated++;
        }
      }
      return { deactivated, voided };
    },
    { shortfall: 'internal', touch: () => touch },
  );
}

/** Open every desired book of some metrics that is missing, retiring stale ones; idempotent. */
export async function spawnForMetrics(m: EntityManager, metricIds: string[], now: Date): Promise<{ opened: MarketRow[]; inputs: OpenBookInput[]; deactivated: number; voided: number }> {
  const metrics = await loadSpawnMetrics(m, metricIds);
  const live = await liveBaselineBooks(m, metricIds);
  const open: OpenBookInput[] = [];
  const stale: LiveBook[] = [];
  for (const metric of metrics) {
    const plan = planHorizons(metric, live.filter((b) => b.metricId === metric.id), now);
    open.push(...plan.open);
    stale.push(...plan.stale);
  }
  const funders = [...new Set(open.filter((i) => i.liquidity > 0n).map((i) => accountId.agent(i.funderId)))];
  const retired = stale.length ? await retireBooks(m, stale, now, funders) : { deactivated: 0, voided: 0 };
  const opened = await openBooks(m, open);
  return { opened, inputs: open, ...retired };
}

/** A metric's horizon pass; what the books it opened cost, and which stayed unfunded and why. */
export async function spawnBooksForMetric(m: EntityManager, metricId: string, now: Date): Promise<ReturnType<typeof costOfOpening>> {
  const r = await spawnForMetrics(m, [metricId], now);
  return costOfOpening(r.opened, r.inputs);
}

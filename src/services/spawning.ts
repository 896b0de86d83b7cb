import type { EntityManager } from 'typeorm';
import { desiredHorizons, type TimePreference } from '../domain/horizons';
import { toNano } from '../domain/money';
import { MARKET_SELECT, marketConsensus, openBook, rowToMarket, type MarketRow } from './markets';

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

export async function loadSpawnMetric(m: EntityManager, metricId: string): Promise<SpawnMetric | null> {
  const rows = await m.query(
    `SELECT mt.id, mt.workspace_id, mt.name, mt.total, mt.value, mt.opens_at, mt.market_range_max, mt.liquidity_credits,
            mt.time_preference, mt.market_title, w.owner_id, w.default_liquidity
       FROM metrics mt JOIN workspaces w ON w.id = mt.workspace_id WHERE mt.id = $1`,
    [metricId],
  );
  if (!rows.length) return null;
  const r = rows[0];
  return {
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
  };
}

/**
 * Where a new baseline book opens (spec §2.2 opensAt): a traded open book of the same metric
 * wins, then opensAt, then the metric's current reading.
 */
export async function baselineOpeningValue(m: EntityManager, metric: SpawnMetric): Promise<number | null> {
  const traded = await m.query(
    `${MARKET_SELECT} WHERE mk.metric_id = $1 AND mk.proposal_id IS NULL AND mk.status = 'open' AND mk.trade_count > 0 AND mk.funded
      ORDER BY mk.last_trade_at DESC LIMIT 1`,
    [metric.id],
  );
  if (traded.length) return marketConsensus(rowToMarket(traded[0]));
  if (metric.opensAt !== null) return metric.opensAt;
  return metric.total ?? metric.value;
}

/** Open every desired book of a metric that is missing; idempotent through the live-book key. */
export async function spawnBooksForMetric(m: EntityManager, metricId: string, now: Date): Promise<MarketRow[]> {
  const metric = await loadSpawnMetric(m, metricId);
  if (!metric) return [];
  const desired = desiredHorizons(now, metric.timePreference);
  if (!desired.length) return [];
  const opensAt = await baselineOpeningValue(m, metric);
  const opened: MarketRow[] = [];
  for (const d of desired) {
    const credit = metric.timePreference?.horizonCredits?.[d.entry]?.book;
    const liquidity = credit !== undefined && credit !== null ? toNano(credit) : (metric.liquidityCredits ?? metric.defaultLiquidity);
    const title = metric.timePreference?.horizonTitles?.[d.entry] ?? metric.marketTitle;
    const mk = await openBook(m, {
      workspaceId: metric.workspaceId,
      metricId: metric.id,
      period: d.period,
      horizonEntry: d.entry,
      title: title ?? null,
      funderId: metric.ownerId,
      liquidity,
      opensAtValue: opensAt,
      rangeMin: 0,
      rangeMax: metric.rangeMax,
    });
    if (mk) opened.push(mk);
  }
  return opened;
}

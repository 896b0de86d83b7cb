import { RELIABILITY_BINS, emptySums, type ScoreSums } from '../../domain/calibration';

/**
 * SQL shared by the standings tables (participant_results, participant_stats, season_stats): the
 * columns of the sums domain/calibration defines, how a row adds to another, and how rows sum.
 */
export const SUM_COLUMNS = ['trades', 'volume', 'settled', 'forecasts', 'sq_err', 'abs_err'] as const;
export const BIN_COLUMNS = ['bin_count', 'bin_p', 'bin_v'] as const;

const binIndexes = Array.from({ length: RELIABILITY_BINS }, (_, i) => i + 1);

/** ON CONFLICT ... DO UPDATE SET: the excluded row added to the stored one (bins element by element). */
export function addExcluded(table: string): string {
  return [
    `resolved_markets = ${table}.resolved_markets + excluded.resolved_markets`,
    ...SUM_COLUMNS.map((c) => `${c} = ${table}.${c} + excluded.${c}`),
    ...BIN_COLUMNS.map((c) => `${c} = ARRAY[${binIndexes.map((i) => `${table}.${c}[${i}] + excluded.${c}[${i}]`).join(', ')}]::bigint[]`),
    `last_resolved_at = greatest(${table}.last_resolved_at, excluded.last_resolved_at)`,
  ].join(',\n        ');
}

/** SELECT list summing rows of a standings table (alias a), for a GROUP BY; without the reliability bins when `bins` is false. */
export function sumSelect(a: string, resolvedMarkets = `sum(${a}.resolved_markets)`, bins = true): string {
  return [
    `${resolvedMarkets}::int AS resolved_markets`,
    ...SUM_COLUMNS.map((c) => `sum(${a}.${c})::${c === 'trades' || c === 'forecasts' ? 'bigint' : 'numeric'}::text AS ${c}`),
    ...(bins ? BIN_COLUMNS.map((c) => `ARRAY[${binIndexes.map((i) => `sum(${a}.${c}[${i}])`).join(', ')}]::bigint[] AS ${c}`) : []),
  ].join(', ');
}

export interface SummedRow {
  resolvedMarkets: number;
  trades: number;
  volume: bigint;
  settled: bigint;
  sums: ScoreSums;
}

const big = (x: unknown): bigint => (x === null || x === undefined ? 0n : BigInt(String(x)));

export function readSums(r: Record<string, unknown>): SummedRow {
  const bins = (c: string) => ((r[c] as unknown[] | null) ?? []).map(big);
  const empty = emptySums();
  const count = bins('bin_count');
  return {
    resolvedMarkets: Number(r.resolved_markets ?? 0),
    trades: Number(r.trades ?? 0),
    volume: big(r.volume),
    settled: big(r.settled),
    sums: {
      forecasts: Number(r.forecasts ?? 0),
      sqErr: big(r.sq_err),
      absErr: big(r.abs_err),
      binCount: count.length ? count.map(Number) : empty.binCount,
      binP: count.length ? bins('bin_p') : empty.binP,
      binV: count.length ? bins('bin_v') : empty.binV,
    },
  };
}

import type { EntityManager } from 'typeorm';
import { benchmarkError, bookScore, horizonOf, type ScoredTrade } from '../../domain/calibration';
import { marketConsensus, type MarketRow } from '../books';
import { addExcluded } from './sums';

interface HolderTrades {
  agent_id: string;
  payout: string | null;
  net_cost: string;
  trades: Array<[ScoredTrade['kind'], number, number, string]>;
}

/**
 * Inside a book's resolving transaction (the `bookResolvedForStats` callback, after the payouts are
 * recorded on the positions): what the book adds for each holder — one participant_results row, and
 * the same sums added to participant_stats (per workspace and metric) and to every season running at
 * `now`. Reads only this book's positions and trades; a second run for the same book adds nothing
 * (the results row exists already).
 */
export async function recordBookStandings(m: EntityManager, mk: MarketRow, value: number, now: Date): Promise<void> {
  await recordBenchmark(m, mk, value, now);
  const holders: HolderTrades[] = await m.query(
    `SELECT p.agent_id, p.payout, p.net_cost,
            coalesce(json_agg(json_build_array(t.kind, t.probability_after, t.consensus_after, t.cost::text) ORDER BY t.seq) FILTER (WHERE t.id IS NOT NULL), '[]') AS trades
       FROM positions p LEFT JOIN trades t ON t.market_id = p.market_id AND t.agent_id = p.agent_id
      WHERE p.market_id = $1
      GROUP BY p.agent_id, p.payout, p.net_cost`,
    [mk.id],
  );
  if (!holders.length) return;
  const outcome = { value, rangeMin: mk.rangeMin, rangeMax: mk.rangeMax };
  const rows = holders.map((h) => {
    const s = bookScore(h.trades.map(([kind, probabilityAfter, consensusAfter]) => ({ kind, probabilityAfter, consensusAfter })), outcome);
    const volume = h.trades.reduce((v, t) => v + (BigInt(t[3]) < 0n ? -BigInt(t[3]) : BigInt(t[3])), 0n);
    return { agent: h.agent_id, trades: h.trades.length, volume, settled: BigInt(h.payout ?? '0') - BigInt(h.net_cost), s };
  });
  const arr = (xs: Array<number | bigint>) => `{${xs.join(',')}}`;
  const sumCols = `resolved_markets, trades, volume, settled, forecasts, sq_err, abs_err, bin_count, bin_p, bin_v, last_resolved_at`;
  const sumVals = `1, r.trades, r.volume, r.settled, r.forecasts, r.sq_err, r.abs_err, r.bc::bigint[], r.bp::bigint[], r.bv::bigint[], $5::timestamptz`;
  await m.query(
    `WITH r AS (
       SELECT * FROM unnest($6::text[], $7::int[], $8::bigint[], $9::bigint[], $10::int[], $11::bigint[], $12::bigint[], $13::text[], $14::text[], $15::text[])
         AS r(agent_id, trades, volume, settled, forecasts, sq_err, abs_err, bc, bp, bv)
     ), ins AS (
       INSERT INTO participant_results (agent_id, market_id, workspace_id, metric_id, resolved_at, trades, volume, settled, forecasts, sq_err, abs_err, bin_count, bin_p, bin_v)
       SELECT r.agent_id, $1, $2, $3, $5, r.trades, r.volume, r.settled, r.forecasts, r.sq_err, r.abs_err, r.bc::bigint[], r.bp::bigint[], r.bv::bigint[] FROM r
       ON CONFLICT (agent_id, market_id) DO NOTHING
       RETURNING agent_id
     ), st AS (
       INSERT INTO participant_stats AS s (agent_id, workspace_id, metric_id, ${sumCols})
       SELECT r.agent_id, $2, $3, ${sumVals} FROM r JOIN ins USING (agent_id)
       ON CONFLICT (agent_id, workspace_id, metric_id) DO UPDATE SET
        ${addExcluded('s')}
     ), ss AS (
       INSERT INTO season_stats AS s (season_id, agent_id, workspace_id, metric_id, ${sumCols})
       SELECT se.id, r.agent_id, $2, $3, ${sumVals} FROM r JOIN ins USING (agent_id) JOIN seasons se ON se.starts_at <= $5 AND se.ends_at > $5
       ON CONFLICT (season_id, agent_id, workspace_id, metric_id) DO UPDATE SET
        ${addExcluded('s')}
     )
     SELECT $4::int AS holders`,
    [
      mk.id,
      mk.workspaceId,
      mk.metricId,
      rows.length,
      now,
      rows.map((r) => r.agent),
      rows.map((r) => r.trades),
      rows.map((r) => r.volume.toString()),
      rows.map((r) => r.settled.toString()),
      rows.map((r) => r.s.forecasts),
      rows.map((r) => r.s.sqErr.toString()),
      rows.map((r) => r.s.absErr.toString()),
      rows.map((r) => arr(r.s.binCount)),
      rows.map((r) => arr(r.s.binP)),
      rows.map((r) => arr(r.s.binV)),
    ],
  );
}

/** The benchmark's sums: the book's final consensus against the realised value, by horizon length (none without liquidity). */
async function recordBenchmark(m: EntityManager, mk: MarketRow, value: number, now: Date): Promise<void> {
  const consensus = marketConsensus(mk);
  if (consensus === null) return;
  const err = benchmarkError(consensus, { value, rangeMin: mk.rangeMin, rangeMax: mk.rangeMax });
  await m.query(
    `INSERT INTO benchmark_stats AS b (workspace_id, horizon, books, abs_err) VALUES ($1, $2, 1, $3)
     ON CONFLICT (workspace_id, horizon) DO UPDATE SET books = b.books + 1, abs_err = b.abs_err + excluded.abs_err`,
    [mk.workspaceId, horizonOf(now.getTime() - mk.createdAt.getTime()), err.toString()],
  );
}

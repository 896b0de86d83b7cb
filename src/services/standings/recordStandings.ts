import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { queryPrepared } from '../../db/prepared';
import { benchmarkError, horizonOf, RELIABILITY_BINS } from '../../domain/calibration';
import { payoutFraction } from '../../domain/lmsr';
import { marketConsensus, readMarkets, type MarketRow } from '../books';
import { addExcluded } from './sums';

const bins = (expr: string) =>
  `ARRAY[${Array.from({ length: RELIABILITY_BINS }, (_, k) => `coalesce(sum(${expr}) FILTER (WHERE y.kind <> 'redeem' AND y.bin = ${k}), 0)`).join(', ')}]::bigint[]`;
const zeros = `array_fill(0::bigint, ARRAY[${RELIABILITY_BINS}])`;
const SUM_COLS = `resolved_markets, trades, volume, settled, forecasts, sq_err, abs_err, bin_count, bin_p, bin_v, last_resolved_at`;
const SUM_VALS = `1, r.trades, r.volume, r.settled, r.forecasts, r.sq_err, r.abs_err, r.bin_count, r.bin_p, r.bin_v, $2::timestamptz`;

/**
 * One statement (prepared once per connection): the book's trades scored per holder exactly as
 * domain/calibration's bookScore does (the same IEEE operations on the same doubles, each term rounded
 * once to 1e-9; test/integration/standings.test.ts checks the rows against bookScore), then
 * participant_results, participant_stats, every running season's season_stats and benchmark_stats.
 * $1 market, $2 now, $3 workspace, $4 metric, $5 v, $6 clamp(V), $7 rangeMin, $8 rangeMax,
 * $9 horizon, $10 the final consensus' error (1e-9) or null without liquidity.
 */
const RECORD = `
WITH y AS (
  SELECT t.agent_id, t.kind, abs(t.cost) AS vol, x.p,
         abs(least($8::float8, greatest($7::float8, t.consensus_after)) - $6::float8) / ($8::float8 - $7::float8) AS e,
         least(9, greatest(0, floor(x.p * 10)))::int AS bin
    FROM trades t CROSS JOIN LATERAL (SELECT least(1::float8, greatest(0::float8, t.probability_after)) AS p) x
   WHERE t.market_id = $1
), s AS (
  SELECT y.agent_id, count(*)::int AS trades, sum(y.vol)::bigint AS volume,
         count(*) FILTER (WHERE y.kind <> 'redeem')::int AS forecasts,
         coalesce(sum(round((y.p - $5::float8) * (y.p - $5::float8) * 1e9::float8)::bigint) FILTER (WHERE y.kind <> 'redeem'), 0)::bigint AS sq_err,
         coalesce(sum(round(y.e * 1e9::float8)::bigint) FILTER (WHERE y.kind <> 'redeem'), 0)::bigint AS abs_err,
         ${bins('1')} AS bin_count, ${bins('round(y.p * 1e9::float8)::bigint')} AS bin_p, ${bins('round($5::float8 * 1e9::float8)::bigint')} AS bin_v
    FROM y GROUP BY y.agent_id
), r AS (
  SELECT p.agent_id, coalesce(s.trades, 0) AS trades, coalesce(s.volume, 0) AS volume, coalesce(p.payout, 0) - p.net_cost AS settled,
         coalesce(s.forecasts, 0) AS forecasts, coalesce(s.sq_err, 0) AS sq_err, coalesce(s.abs_err, 0) AS abs_err,
         coalesce(s.bin_count, ${zeros}) AS bin_count, coalesce(s.bin_p, ${zeros}) AS bin_p, coalesce(s.bin_v, ${zeros}) AS bin_v
    FROM positions p LEFT JOIN s ON s.agent_id = p.agent_id
   WHERE p.market_id = $1
), ins AS (
  INSERT INTO participant_results (agent_id, market_id, workspace_id, metric_id, resolved_at, trades, volume, settled, forecasts, sq_err, abs_err, bin_count, bin_p, bin_v)
  SELECT r.agent_id, $1, $3, $4, $2, r.trades, r.volume, r.settled, r.forecasts, r.sq_err, r.abs_err, r.bin_count, r.bin_p, r.bin_v FROM r
  ON CONFLICT (agent_id, market_id) DO NOTHING
  RETURNING agent_id
), st AS (
  INSERT INTO participant_stats AS s (agent_id, workspace_id, metric_id, ${SUM_COLS})
  SELECT r.agent_id, $3, $4, ${SUM_VALS} FROM r JOIN ins ON ins.agent_id = r.agent_id
  ON CONFLICT (agent_id, workspace_id, metric_id) DO UPDATE SET
    ${addExcluded('s')}
), ss AS (
  INSERT INTO season_stats AS s (season_id, agent_id, workspace_id, metric_id, ${SUM_COLS})
  SELECT se.id, r.agent_id, $3, $4, ${SUM_VALS} FROM r JOIN ins ON ins.agent_id = r.agent_id JOIN seasons se ON se.starts_at <= $2 AND se.ends_at > $2
  ON CONFLICT (season_id, agent_id, workspace_id, metric_id) DO UPDATE SET
    ${addExcluded('s')}
), bm AS (
  INSERT INTO benchmark_stats AS b (workspace_id, horizon, books, abs_err)
  SELECT $3, $9, 1, $10::bigint WHERE $10::bigint IS NOT NULL
  ON CONFLICT (workspace_id, horizon) DO UPDATE SET books = b.books + 1, abs_err = b.abs_err + excluded.abs_err
)
SELECT count(*)::int AS holders FROM ins`;

/**
 * The resolving transaction's whole share of the standings (the `bookResolvedForStats` callback): a
 * CTE the book's status UPDATE carries (so no round trip of its own) that marks the book pending, one
 * primary-key insert. The `standings` job, enqueued after commit by the resolution's caller (and the
 * minute sweep behind it), adds the book with `recordPendingStandings`.
 */
export function markStandingsPending(mk: MarketRow, now: Date, firstParam: number): { cte: string; params: unknown[] } {
  return {
    cte: `standings_mark AS (INSERT INTO standings_pending (market_id, resolved_at) VALUES ($${firstParam}::uuid, $${firstParam + 1}::timestamptz) ON CONFLICT (market_id) DO NOTHING)`,
    params: [mk.id, now],
  };
}

/**
 * What one resolved book adds for each holder — one participant_results row, and the same sums added
 * to participant_stats (per workspace and metric) and to every season running at `now` (its
 * resolution instant) — and the book's final consensus error to the benchmark. Reads only this
 * book's positions and trades, in one prepared statement. Called once per book, under its pending
 * row's deletion (see recordPendingStandings); the results rows' primary key guards a holder twice.
 */
export async function recordBookStandings(m: EntityManager, mk: MarketRow, value: number, now: Date): Promise<number> {
  const outcome = { value, rangeMin: mk.rangeMin, rangeMax: mk.rangeMax };
  const consensus = marketConsensus(mk);
  const [row] = await queryPrepared<{ holders: number }>(m, RECORD, [
    mk.id,
    now,
    mk.workspaceId,
    mk.metricId,
    payoutFraction(value, mk.rangeMin, mk.rangeMax),
    Math.min(mk.rangeMax, Math.max(mk.rangeMin, value)),
    mk.rangeMin,
    mk.rangeMax,
    horizonOf(now.getTime() - mk.createdAt.getTime()),
    consensus === null ? null : benchmarkError(consensus, outcome).toString(),
  ]);
  return row?.holders ?? 0;
}

/** Most books one standings transaction adds (a job's payload, or a sweep's pass). */
export const STANDINGS_BATCH = 200;

/**
 * The `standings` job: the given resolved books (all pending ones, oldest first, up to
 * STANDINGS_BATCH, without ids) added to the standings in ONE transaction. Each book's pending row
 * is locked (in id order) and deleted first: the per-book marker. A job that runs twice, or a sweep
 * racing it, waits on the row lock and then finds it gone, so a book is added exactly once whatever
 * the queue does. The book's value and instant are the resolution's (markets.resolved_value is
 * min(V, rangeMax), which every term clamps the same way; pending.resolved_at = markets.resolved_at).
 */
export async function recordPendingStandings(deps: Deps, marketIds?: string[]): Promise<{ books: number; holders: number }> {
  return inTransaction(deps.ds, async (m) => {
    // (queryPrepared answers the rows: m.query answers [rows, count] for a DELETE ... RETURNING)
    const taken = await queryPrepared<{ market_id: string; resolved_at: Date }>(
      m,
      `DELETE FROM standings_pending p USING (
         SELECT market_id FROM standings_pending WHERE ($1::uuid[] IS NULL OR market_id = ANY($1::uuid[]))
          ORDER BY ${marketIds ? 'market_id' : 'resolved_at, market_id'} LIMIT ${STANDINGS_BATCH} FOR UPDATE
       ) x WHERE p.market_id = x.market_id RETURNING p.market_id, p.resolved_at`,
      [marketIds ?? null],
    );
    if (!taken.length) return { books: 0, holders: 0 };
    const at = new Map(taken.map((t) => [t.market_id, t.resolved_at]));
    const books = await readMarkets(m, `mk.id = ANY($1::uuid[]) AND mk.status = 'resolved'`, [[...at.keys()]], { order: 'mk.id' });
    let holders = 0;
    for (const mk of books) holders += await recordBookStandings(m, mk, Number(mk.resolvedValue), at.get(mk.id)!);
    return { books: books.length, holders };
  });
}

/** The sweep behind the jobs (a lost or failed job, a resolution outside a lane job): every pending book, batch after batch. */
export async function sweepPendingStandings(deps: Deps): Promise<{ books: number; holders: number }> {
  const total = { books: 0, holders: 0 };
  for (;;) {
    const pass = await recordPendingStandings(deps);
    total.books += pass.books;
    total.holders += pass.holders;
    if (pass.books < STANDINGS_BATCH) return total;
  }
}

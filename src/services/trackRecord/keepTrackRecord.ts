import type { EntityManager } from 'typeorm';
import { firstRow } from '../../db/queryRows';
import { adviceOf, scoreRealised, type Branch, type DecidedPair, type RealisedScore } from '../../domain/trackRecord';
import { marketConsensus, readMarkets, type MarketRow } from '../books';

/**
 * The track record kept as things happen (issue 68), inside the transactions that change them: a
 * decision writes its rows, the decided branch's resolution scores them, its void marks them. A read
 * only sums what is stored.
 */

const SCORE_COLUMNS = `status = 'realised', realised_value = $2, settled_at = $3, market_error = $4, persistence_error = $5, average_change_error = $6,
  direction_held = $7, average_change_direction_held = $8, forecast_p = $9, outcome_v = $10`;
const scoreParams = (s: RealisedScore) => [s.marketError, s.persistenceError, s.averageChangeError, s.directionHeld, s.averageChangeDirectionHeld, s.forecastP, s.outcomeV];

/**
 * Inside the deciding transaction, after the books were closed and the ruled-out branch voided: one
 * row per metric and target date whose decided branch has a book that was not voided. Its consensus
 * is final (a closed book takes no trade), so it is the consensus at the decision; a branch that
 * already resolved while the proposal was pending is scored at once. Withdrawals and spam declines
 * leave no realised branch and no row.
 */
export async function recordDecision(m: EntityManager, proposalId: string, decision: string, now: Date): Promise<void> {
  if (decision !== 'approved' && decision !== 'declined') return;
  const books = await readMarkets(m, 'mk.proposal_id = $1', [proposalId], { order: 'mk.created_at' });
  const latest = new Map<string, MarketRow>();
  for (const mk of books) if (mk.branch) latest.set(`${mk.metricId}|${mk.targetDate}|${mk.branch}`, mk);
  const decided = [...latest.values()].filter((mk) => mk.branch === decision && mk.status !== 'voided');
  if (!decided.length) return;
  const metricIds = [...new Set(decided.map((mk) => mk.metricId))];
  const [lasts, changes] = await Promise.all([
    m.query(
      `SELECT DISTINCT ON (metric_id) metric_id, value FROM metric_readings
        WHERE metric_id = ANY($1::uuid[]) AND NOT na AND value IS NOT NULL AND as_of <= $2 ORDER BY metric_id, as_of DESC, id DESC`,
      [metricIds, now],
    ) as Promise<Array<{ metric_id: string; value: number }>>,
    // The metric's mean change over the decisions realised so far (persistence_error is realised - last reading).
    m.query(
      `SELECT metric_id, avg(persistence_error)::float8 AS change FROM track_record
        WHERE metric_id = ANY($1::uuid[]) AND status = 'realised' AND persistence_error IS NOT NULL AND settled_at <= $2 GROUP BY metric_id`,
      [metricIds, now],
    ) as Promise<Array<{ metric_id: string; change: number }>>,
  ]);
  const lastOf = new Map(lasts.map((r) => [r.metric_id, Number(r.value)]));
  const changeOf = new Map(changes.map((r) => [r.metric_id, Number(r.change)]));
  const other: Branch = decision === 'approved' ? 'declined' : 'approved';
  for (const mk of decided) {
    const sibling = latest.get(`${mk.metricId}|${mk.targetDate}|${other}`);
    const mine = marketConsensus(mk);
    const theirs = sibling ? marketConsensus(sibling) : null;
    const pair: DecidedPair = {
      decision,
      rangeMin: mk.rangeMin,
      rangeMax: mk.rangeMax,
      approvedConsensus: decision === 'approved' ? mine : theirs,
      declinedConsensus: decision === 'declined' ? mine : theirs,
      lastReading: lastOf.get(mk.metricId) ?? null,
      averageChange: changeOf.get(mk.metricId) ?? null,
    };
    const row = await firstRow<{ id: string }>(
      m,
      `INSERT INTO track_record (workspace_id, proposal_id, metric_id, target_date, decided_market_id, decision, decided_at, range_min, range_max,
                                 approved_consensus, declined_consensus, advice, last_reading, average_change)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (decided_market_id) DO NOTHING RETURNING id`,
      [mk.workspaceId, proposalId, mk.metricId, mk.targetDate, mk.id, decision, now, mk.rangeMin, mk.rangeMax, pair.approvedConsensus, pair.declinedConsensus, adviceOf(pair), pair.lastReading, pair.averageChange],
    );
    if (row && mk.status === 'resolved' && mk.resolvedValue !== null) {
      await m.query(`UPDATE track_record SET ${SCORE_COLUMNS} WHERE id = $1`, [row.id, mk.resolvedValue, mk.resolvedAt ?? now, ...scoreParams(scoreRealised(pair, mk.resolvedValue))]);
    }
  }
}

/** Inside the resolving transaction of a book: the decided pair it realises, if any, is scored (once). */
export async function recordBookResolved(m: EntityManager, mk: MarketRow, value: number, now: Date): Promise<void> {
  if (!mk.proposalId || !mk.branch) return;
  const r = await firstRow<{
    id: string;
    decision: Branch;
    range_min: number;
    range_max: number;
    approved_consensus: number | null;
    declined_consensus: number | null;
    last_reading: number | null;
    average_change: number | null;
  }>(
    m,
    `SELECT id, decision, range_min, range_max, approved_consensus, declined_consensus, last_reading, average_change
       FROM track_record WHERE decided_market_id = $1 AND status = 'pending' FOR UPDATE`,
    [mk.id],
  );
  if (!r) return;
  const pair: DecidedPair = {
    decision: r.decision,
    rangeMin: Number(r.range_min),
    rangeMax: Number(r.range_max),
    approvedConsensus: r.approved_consensus,
    declinedConsensus: r.declined_consensus,
    lastReading: r.last_reading,
    averageChange: r.average_change,
  };
  await m.query(`UPDATE track_record SET ${SCORE_COLUMNS} WHERE id = $1`, [r.id, value, now, ...scoreParams(scoreRealised(pair, value))]);
}

/** Inside a book's void: a decided branch voided later (its metric gone, a void by hand) realises nothing. */
export async function recordBookVoided(m: EntityManager, mk: Pick<MarketRow, 'id' | 'proposalId'>, now: Date): Promise<void> {
  if (!mk.proposalId) return;
  await m.query(`UPDATE track_record SET status = 'voided', settled_at = $2 WHERE decided_market_id = $1 AND status = 'pending'`, [mk.id, now]);
}

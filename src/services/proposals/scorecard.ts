import type { DataSource, EntityManager } from 'typeorm';
import { firstRow, rows } from '../../db/queryRows';
import { rowReader, type Row } from '../../db/rows';
import { ProposalScorecardRow } from '../../entities/proposal';
import { marketConsensus, readMarkets, type MarketRow } from '../books';
import { proposalShownSql } from '../access';

/**
 * The decision scorecard: when a branch book of a proposal resolves, the realised value is recorded
 * beside both branches' final consensus. "Within range" means the realised value (clamped into the
 * book's range, as the payout is) lies within SCORECARD_TOLERANCE of the range's width of the
 * branch's final consensus.
 */
export const SCORECARD_TOLERANCE = 0.1;

/** A scorecard entry as stored (its entity's columns, db/rows) with its proposal's title joined in. */
export type ScorecardRow = Row<ProposalScorecardRow> & { proposalTitle: string };

const readScorecard = rowReader(ProposalScorecardRow);
/** A SCORECARD_SELECT row (snake_case), with the columns read by name. */
type ScorecardRaw = Record<string, unknown> & { proposal_id: string; proposal_title: string };
const rowToScorecard = (r: ScorecardRaw): ScorecardRow => ({ ...readScorecard(r), proposalTitle: r.proposal_title });

const SCORECARD_SELECT = `SELECT s.*, p.title AS proposal_title FROM proposal_scorecard s JOIN proposals p ON p.id = s.proposal_id`;

/**
 * Runs inside the resolving transaction (registered as the bookResolved callback): a no-op for baseline books,
 * idempotent per market.
 */
export async function recordScorecard(m: EntityManager, mk: MarketRow, value: number, finalConsensus: number | null, now: Date): Promise<void> {
  if (!mk.proposalId || !mk.branch) return;
  const p = await firstRow<{ status: string }>(m, `SELECT status FROM proposals WHERE id = $1`, [mk.proposalId]);
  if (!p) return;
  const otherBranch = mk.branch === 'approved' ? 'declined' : 'approved';
  const sib = await readMarkets(m, 'mk.proposal_id = $1 AND mk.metric_id = $2 AND mk.target_date = $3 AND mk.branch = $4', [mk.proposalId, mk.metricId, mk.targetDate, otherBranch], {
    order: 'mk.created_at DESC',
    limit: 1,
  });
  const other = sib.length ? marketConsensus(sib[0]) : null;
  const realised = Math.min(Math.max(value, mk.rangeMin), mk.rangeMax);
  const error = finalConsensus === null ? null : realised - finalConsensus;
  const within = error === null ? null : Math.abs(error) <= SCORECARD_TOLERANCE * (mk.rangeMax - mk.rangeMin);
  const closer = finalConsensus === null || other === null ? null : Math.abs(realised - finalConsensus) < Math.abs(realised - other);
  const decision: string = p.status;
  const taken = decision === 'pending' ? null : decision === mk.branch;
  await m.query(
    `INSERT INTO proposal_scorecard (proposal_id, workspace_id, market_id, metric_id, metric_name, target_date, branch, decision, taken, realised_value,
                                     range_min, range_max, approved_consensus, declined_consensus, predicted, error, within_range, closer_than_other, resolved_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     ON CONFLICT (market_id) DO NOTHING`,
    [
      mk.proposalId,
      mk.workspaceId,
      mk.id,
      mk.metricId,
      mk.metricName,
      mk.targetDate,
      mk.branch,
      decision,
      taken,
      value,
      mk.rangeMin,
      mk.rangeMax,
      mk.branch === 'approved' ? finalConsensus : other,
      mk.branch === 'declined' ? finalConsensus : other,
      finalConsensus,
      error,
      within,
      closer,
      now,
    ],
  );
}

/** A later decision marks which recorded branch was taken (a branch can resolve while its proposal is pending). */
export async function markScorecardDecision(m: EntityManager, proposalId: string, status: string): Promise<void> {
  await m.query(`UPDATE proposal_scorecard SET decision = $2, taken = (branch = $2) WHERE proposal_id = $1`, [proposalId, status]);
}

export async function scorecardOf(m: DataSource | EntityManager, proposalIds: string[]): Promise<Map<string, ScorecardRow[]>> {
  const out = new Map<string, ScorecardRow[]>(proposalIds.map((id) => [id, []]));
  if (!proposalIds.length) return out;
  const entries = await rows<ScorecardRaw>(m, `${SCORECARD_SELECT} WHERE s.proposal_id = ANY($1::uuid[]) ORDER BY s.id`, [proposalIds]);
  for (const r of entries) out.get(r.proposal_id)?.push(rowToScorecard(r));
  return out;
}

export interface ScorecardStats {
  /** Resolved books of the branch the decision took. */
  resolved: number;
  /** Of those, how many had a consensus (a funded book). */
  predicted: number;
  withinRange: number;
  withinRangeRate: number | null;
  meanAbsoluteError: number | null;
  /** Mean absolute error as a fraction of the book's range width. */
  meanRelativeError: number | null;
  closerThanOther: number;
  closerThanOtherRate: number | null;
}

interface StatSums {
  n: number;
  predicted: number;
  within: number;
  absSum: number;
  relSum: number;
  comparable: number;
  closer: number;
}

function stats(s: StatSums): ScorecardStats {
  return {
    resolved: s.n,
    predicted: s.predicted,
    withinRange: s.within,
    withinRangeRate: s.predicted ? s.within / s.predicted : null,
    meanAbsoluteError: s.predicted ? s.absSum / s.predicted : null,
    meanRelativeError: s.predicted ? s.relSum / s.predicted : null,
    closerThanOther: s.closer,
    closerThanOtherRate: s.comparable ? s.closer / s.comparable : null,
  };
}

export interface WorkspaceScorecard {
  tolerance: number;
  summary: ScorecardStats;
  byDecision: { approved: ScorecardStats; declined: ScorecardStats };
  /** Resolved branch books of proposals still pending (not counted above). */
  undecided: number;
  entries: ScorecardRow[];
  total: number;
}

const SUMS_SELECT = `SELECT decision, taken, count(*)::int AS n, count(predicted)::int AS predicted,
            count(*) FILTER (WHERE within_range)::int AS within,
            coalesce(sum(abs(error)), 0)::float8 AS abs_sum,
            coalesce(sum(abs(error) / nullif(range_max - range_min, 0)), 0)::float8 AS rel_sum,
            count(closer_than_other)::int AS comparable, count(*) FILTER (WHERE closer_than_other)::int AS closer`;

/** The scorecard's sums from its rows grouped by decision and taken (one workspace's rows). */
function summarize(rows: Array<Record<string, unknown>>): Pick<WorkspaceScorecard, 'summary' | 'byDecision' | 'undecided'> {
  const zero = (): StatSums => ({ n: 0, predicted: 0, within: 0, absSum: 0, relSum: 0, comparable: 0, closer: 0 });
  const all = zero();
  const by = { approved: zero(), declined: zero() };
  let undecided = 0;
  for (const r of rows) {
    if (r.taken === null) undecided += r.n as number;
    if (r.taken !== true) continue;
    for (const acc of [all, by[r.decision as 'approved' | 'declined']]) {
      acc.n += r.n as number;
      acc.predicted += r.predicted as number;
      acc.within += r.within as number;
      acc.absSum += r.abs_sum as number;
      acc.relSum += r.rel_sum as number;
      acc.comparable += r.comparable as number;
      acc.closer += r.closer as number;
    }
  }
  return { summary: stats(all), byDecision: { approved: stats(by.approved), declined: stats(by.declined) }, undecided };
}

/**
 * The summaries of many workspaces' scorecards in one statement (GET /benchmark lists every public
 * workspace's: one query per workspace grew with their number, issue 60).
 */
/**
 * SQL: scorecard row `s` is about no metric among the hidden ids in parameter $n, nor of a proposal
 * hidden with them (issue 65: such a row counts in no figure); '' when nothing is hidden.
 */
function scorecardShownSql(hiddenMetricIds: readonly string[] | null, n: number): string {
  return hiddenMetricIds?.length ? ` AND NOT (s.metric_id = ANY($${n}::uuid[])) AND EXISTS (SELECT 1 FROM proposals p WHERE p.id = s.proposal_id AND ${proposalShownSql('p', `$${n}::uuid[]`)})` : '';
}

/** The scorecard summaries of these workspaces, leaving out the rows of `hiddenMetricIds`. */
export async function scorecardSummaries(ds: DataSource, workspaceIds: string[], hiddenMetricIds: readonly string[]): Promise<Map<string, ScorecardStats>> {
  const rows: Array<Record<string, unknown>> = await ds.query(
    `${SUMS_SELECT}, workspace_id FROM proposal_scorecard s WHERE s.workspace_id = ANY($1::uuid[])${scorecardShownSql(hiddenMetricIds, 2)} GROUP BY workspace_id, decision, taken`,
    hiddenMetricIds.length ? [workspaceIds, hiddenMetricIds] : [workspaceIds],
  );
  const grouped = new Map<string, Array<Record<string, unknown>>>(workspaceIds.map((id) => [id, []]));
  for (const r of rows) grouped.get(r.workspace_id as string)?.push(r);
  return new Map([...grouped].map(([id, rs]) => [id, summarize(rs).summary]));
}

/** The summary over every public workspace's scorecard, summed in the database (GET /benchmark's overall). */
export async function publicScorecardSummary(ds: DataSource, hiddenMetricIds: readonly string[]): Promise<ScorecardStats> {
  const rows: Array<Record<string, unknown>> = await ds.query(
    `${SUMS_SELECT} FROM proposal_scorecard s JOIN workspaces w ON w.id = s.workspace_id AND w.public WHERE true${scorecardShownSql(hiddenMetricIds, 1)} GROUP BY decision, taken`,
    hiddenMetricIds.length ? [hiddenMetricIds] : [],
  );
  return summarize(rows).summary;
}

/** How often the branch taken predicted the realised value within range, and how far off, over the workspace. */
export async function workspaceScorecard(ds: DataSource, workspaceId: string, page: { limit: number; offset: number }, hiddenMetricIds: string[] | null = null): Promise<WorkspaceScorecard> {
  const shown = scorecardShownSql(hiddenMetricIds, 2);
  const args = hiddenMetricIds?.length ? [workspaceId, hiddenMetricIds] : [workspaceId];
  const sums: Array<Record<string, unknown>> = await ds.query(`${SUMS_SELECT} FROM proposal_scorecard s WHERE s.workspace_id = $1${shown} GROUP BY decision, taken`, args);
  const { summary, byDecision, undecided } = summarize(sums);
  const [{ n }] = await rows<{ n: number }>(ds, `SELECT count(*)::int AS n FROM proposal_scorecard s WHERE s.workspace_id = $1${shown}`, args);
  const entries = await rows<ScorecardRaw>(ds, `${SCORECARD_SELECT} WHERE s.workspace_id = $1${shown} ORDER BY s.id DESC LIMIT $${args.length + 1} OFFSET $${args.length + 2}`, [...args, page.limit, page.offset]);
  return {
    tolerance: SCORECARD_TOLERANCE,
    summary,
    byDecision,
    undecided,
    entries: entries.map(rowToScorecard),
    total: n,
  };
}

/** Which branch books a proposal opens (an approved+declined pair per leaf metric and date), and opening them. */
import type { EntityManager } from 'typeorm';
import type { Proposal } from '../../entities/proposal';
import { desiredHorizons, periodContaining, type Period } from '../../domain/horizons';
import { toNano } from '../../domain/money';
import { accountId, balanceOf } from '../ledger';
import { openBooks, type MarketRow, type OpenBookInput } from '../books';
import { liveBaselineBooks, loadSpawnMetrics, openingValueFrom, type SpawnMetric } from '../lifecycle';

/** The metric's primary horizon: its nearest date that is neither a minute cell nor until-settled; else the current month. */
export function primaryHorizon(now: Date, metric: Pick<SpawnMetric, 'timePreference'>): { entry: string; period: Period } {
  const d = desiredHorizons(now, metric.timePreference).find((h) => h.period.granularity !== 'minute' && h.period.granularity !== 'until-settled');
  if (d) return d;
  const period = periodContaining(now, 'month');
  return { entry: period.targetDate, period };
}

export interface PairPlan {
  metric: SpawnMetric;
  entry: string;
  period: Period;
  /** 'proposer' pairs are funded with the proposal's liquidity; 'owner' pairs with the date's horizonCredits.proposal. */
  payer: 'proposer' | 'owner';
  liquidity: bigint;
}

/**
 * One approved+declined pair per metric at its primary horizon (funded by the proposer, unless the
 * owner subsidises that date), plus one at every other date whose horizonCredits.proposal > 0
 * (funded by the workspace owner). Expected metrics (metricIds) come first, in their order.
 */
export function planPairs(now: Date, metrics: SpawnMetric[], liquidity: bigint): PairPlan[] {
  const plans: PairPlan[] = [];
  for (const metric of metrics) {
    const primary = primaryHorizon(now, metric);
    const credits = metric.timePreference?.horizonCredits ?? {};
    const subsidyOf = (entry: string) => {
      const c = credits[entry]?.proposal;
      return typeof c === 'number' && c > 0 ? toNano(c) : 0n;
    };
    const primarySubsidy = subsidyOf(primary.entry);
    plans.push(
      primarySubsidy > 0n
        ? { metric, ...primary, payer: 'owner', liquidity: primarySubsidy }
        : { metric, ...primary, payer: 'proposer', liquidity },
    );
    for (const d of desiredHorizons(now, metric.timePreference)) {
      const subsidy = subsidyOf(d.entry);
      if (subsidy > 0n && d.period.targetDate !== primary.period.targetDate) plans.push({ metric, ...d, payer: 'owner', liquidity: subsidy });
    }
  }
  return plans;
}

export interface SkippedContributor {
  contributorId: string;
  metricId: string;
  targetDate: string;
  /** Nano-units (the event shows credits). */
  needed: bigint;
  had: bigint;
}

/**
 * Both branch inputs of every pair. A branch follows its baseline: it opens where the live
 * baseline book of the same date stands, else where a new baseline book would open.
 */
export async function pairInputs(m: EntityManager, p: Pick<Proposal, 'id' | 'workspaceId' | 'deadline' | 'proposedBy'>, plans: PairPlan[]): Promise<OpenBookInput[][]> {
  const live = await liveBaselineBooks(m, [...new Set(plans.map((x) => x.metric.id))]);
  return plans.map((plan) => {
    const mine = live.filter((b) => b.metricId === plan.metric.id);
    const sameDate = mine.find((b) => b.targetDate === plan.period.targetDate && b.consensus !== null);
    const opensAtValue = sameDate ? sameDate.consensus : openingValueFrom(plan.metric, mine);
    return (['approved', 'declined'] as const).map((branch) => ({
      workspaceId: p.workspaceId,
      metricId: plan.metric.id,
      metricName: plan.metric.name,
      period: plan.period,
      horizonEntry: plan.entry,
      proposalId: p.id,
      branch,
      tradingEndsAt: p.deadline,
      funderId: plan.payer === 'owner' ? plan.metric.ownerId : (p.proposedBy as string),
      liquidity: plan.liquidity,
      opensAtValue,
      rangeMin: 0,
      rangeMax: plan.metric.rangeMax,
    }));
  });
}

/**
 * Open pairs one at a time, each in a savepoint: a pair that already exists (respawn) opens nothing,
 * and a pair whose funder cannot pay both branches is rolled back whole and reported as skipped.
 */
export async function openPairsOrSkip(m: EntityManager, pairs: OpenBookInput[][]): Promise<{ opened: MarketRow[]; skipped: SkippedContributor[] }> {
  const opened: MarketRow[] = [];
  const skipped: SkippedContributor[] = [];
  for (const pair of pairs) {
    await m.query('SAVEPOINT proposal_pair');
    const books = await openBooks(m, pair);
    const short = pair[0].liquidity > 0n && books.some((mk) => !mk.funded);
    if (books.length < pair.length || short) {
      await m.query('ROLLBACK TO SAVEPOINT proposal_pair');
      if (short) {
        const { funderId, metricId, period, liquidity } = pair[0];
        const had = (await balanceOf(m, accountId.agent(funderId))) ?? 0n;
        skipped.push({ contributorId: funderId, metricId, targetDate: period.targetDate, needed: 2n * liquidity, had });
      }
      continue;
    }
    await m.query('RELEASE SAVEPOINT proposal_pair');
    opened.push(...books);
  }
  return { opened, skipped };
}

/** Leaf metrics of the workspace, the expected ones (metricIds) first in the order given. */
export async function leafMetrics(m: EntityManager, workspaceId: string, expected: string[]): Promise<SpawnMetric[]> {
  const rows: Array<{ id: string }> = await m.query(`SELECT id FROM metrics WHERE workspace_id = $1 AND is_leaf ORDER BY sort_order, created_at, id`, [workspaceId]);
  const rank = (id: string) => {
    const i = expected.indexOf(id);
    return i < 0 ? expected.length : i;
  };
  const ordered = rows.map((r) => r.id).sort((a, b) => rank(a) - rank(b));
  const byId = new Map((await loadSpawnMetrics(m, ordered)).map((mt) => [mt.id, mt]));
  return ordered.map((id) => byId.get(id)).filter((mt): mt is SpawnMetric => !!mt);
}

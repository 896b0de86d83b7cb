import type { DataSource, EntityManager } from 'typeorm';
import { headlineImpact, proposalImpact as impactOf, type BranchImpact as DomainBranchImpact, type ImpactBasis, type ImpactEntry as DomainImpactEntry } from '../../domain/proposalImpact';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { DomainError } from '../../errors';
import { desiredHorizons, periodContaining, type Period } from '../../domain/horizons';
import { toCredits, toNano } from '../../domain/money';
import { accountId, balanceOf, insufficientBalance } from '../ledger';
import { lockMarket, MARKET_SELECT, marketConsensus, openBooks, rowToMarket, type MarketRow, type OpenBookInput } from '../markets';
import { emitEvent } from '../events';
import { voidLockedMarket } from '../markets';
import { liveBaselineBooks, loadSpawnMetrics, openingValueFrom, type SpawnMetric } from '../markets';
import { markScorecardDecision, scorecardOf, type ScorecardRow } from './scorecard';

export type ProposalStatus = 'pending' | 'approved' | 'declined' | 'withdrawn';
export const PROPOSAL_STATUSES: readonly ProposalStatus[] = ['pending', 'approved', 'declined', 'withdrawn'];
export type Branch = 'approved' | 'declined';

export interface ProposalRow {
  id: string;
  workspaceId: string;
  title: string;
  description: string;
  proposedBy: string | null;
  proposedByNickname: string | null;
  status: ProposalStatus;
  spam: boolean;
  /** Per-branch liquidity the proposer funds, nano-units. */
  liquidity: bigint;
  metricIds: string[];
  headlineMetricId: string | null;
  headlineTargetDate: string | null;
  deadline: Date | null;
  decidedBy: string | null;
  decidedAt: Date | null;
  decisionTradeSeq: bigint | null;
  createdAt: Date;
}

const PROPOSAL_SELECT = `SELECT p.*, a.nickname AS proposer_nickname FROM proposals p LEFT JOIN agents a ON a.id = p.proposed_by`;

function rowToProposal(r: Record<string, any>): ProposalRow { // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    title: r.title,
    description: r.description,
    proposedBy: r.proposed_by,
    proposedByNickname: r.proposer_nickname ?? null,
    status: r.status,
    spam: r.spam,
    liquidity: BigInt(r.liquidity),
    metricIds: r.metric_ids ?? [],
    headlineMetricId: r.headline_metric_id,
    headlineTargetDate: r.headline_target_date,
    deadline: r.deadline,
    decidedBy: r.decided_by,
    decidedAt: r.decided_at,
    decisionTradeSeq: r.decision_trade_seq === null ? null : BigInt(r.decision_trade_seq),
    createdAt: r.created_at,
  };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function proposalNotFound(id: string): DomainError {
  return new DomainError('not_found', `Proposal "${id}" was not found in this workspace.`);
}

async function findProposal(m: DataSource | EntityManager, workspaceId: string, id: string, lock = false): Promise<ProposalRow | null> {
  if (!UUID_RE.test(id)) return null;
  const rows = await m.query(`${PROPOSAL_SELECT} WHERE p.id = $1 AND p.workspace_id = $2${lock ? ' FOR UPDATE OF p' : ''}`, [id, workspaceId]);
  return rows.length ? rowToProposal(rows[0]) : null;
}

// ---------- which books a proposal opens ----------

/** The metric's primary horizon: its nearest date that is neither a minute cell nor until-settled; else the current month. */
export function primaryHorizon(now: Date, metric: Pick<SpawnMetric, 'timePreference'>): { entry: string; period: Period } {
  const d = desiredHorizons(now, metric.timePreference).find((h) => h.period.granularity !== 'minute' && h.period.granularity !== 'until-settled');
  if (d) return d;
  const period = periodContaining(now, 'month');
  return { entry: period.targetDate, period };
}

interface PairPlan {
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
function planPairs(now: Date, metrics: SpawnMetric[], liquidity: bigint): PairPlan[] {
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
  needed: number;
  had: number;
}

/**
 * Both branch inputs of every pair. A branch follows its baseline: it opens where the live
 * baseline book of the same date stands, else where a new baseline book would open.
 */
async function pairInputs(m: EntityManager, p: ProposalRow, plans: PairPlan[]): Promise<OpenBookInput[][]> {
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
async function openPairsOrSkip(m: EntityManager, pairs: OpenBookInput[][]): Promise<{ opened: MarketRow[]; skipped: SkippedContributor[] }> {
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
        skipped.push({ contributorId: funderId, metricId, targetDate: period.targetDate, needed: toCredits(2n * liquidity), had: toCredits(had) });
      }
      continue;
    }
    await m.query('RELEASE SAVEPOINT proposal_pair');
    opened.push(...books);
  }
  return { opened, skipped };
}

/** Leaf metrics of the workspace, the expected ones (metricIds) first in the order given. */
async function leafMetrics(m: EntityManager, workspaceId: string, expected: string[]): Promise<SpawnMetric[]> {
  const rows: Array<{ id: string }> = await m.query(`SELECT id FROM metrics WHERE workspace_id = $1 AND is_leaf ORDER BY sort_order, created_at, id`, [workspaceId]);
  const rank = (id: string) => {
    const i = expected.indexOf(id);
    return i < 0 ? expected.length : i;
  };
  const ordered = rows.map((r) => r.id).sort((a, b) => rank(a) - rank(b));
  const byId = new Map((await loadSpawnMetrics(m, ordered)).map((mt) => [mt.id, mt]));
  return ordered.map((id) => byId.get(id)).filter((mt): mt is SpawnMetric => !!mt);
}

/** metricIds must name leaf metrics of this workspace the caller can read; duplicates collapse. */
async function checkExpectedMetrics(m: EntityManager, workspaceId: string, ids: string[], readable: (id: string) => boolean): Promise<string[]> {
  const unique = [...new Set(ids)];
  if (!unique.length) return [];
  const malformed = unique.filter((id) => !UUID_RE.test(id));
  const rows: Array<{ id: string; name: string; is_leaf: boolean }> = await m.query(
    `SELECT id, name, is_leaf FROM metrics WHERE workspace_id = $1 AND id = ANY($2::uuid[])`,
    [workspaceId, unique.filter((id) => UUID_RE.test(id))],
  );
  const found = new Map(rows.filter((r) => readable(r.id)).map((r) => [r.id, r]));
  const missing = [...malformed, ...unique.filter((id) => UUID_RE.test(id) && !found.has(id))];
  if (missing.length) {
    throw new DomainError('validation_failed', `metricIds names ${missing.length === 1 ? 'a metric' : 'metrics'} not in this workspace: ${missing.join(', ')}.`, { unknownMetricIds: missing });
  }
  const computed = rows.filter((r) => !r.is_leaf);
  if (computed.length) {
    throw new DomainError(
      'validation_failed',
      `metricIds may only name leaf metrics (proposals price leaf metrics); ${computed.map((r) => `"${r.name}"`).join(', ')} ${computed.length === 1 ? 'is' : 'are'} computed by a formula: name the leaf metrics ${computed.length === 1 ? 'it depends' : 'they depend'} on.`,
      { computedMetricIds: computed.map((r) => r.id) },
    );
  }
  return unique;
}

// ---------- create ----------

export interface CreateProposalInput {
  title: string;
  description?: string;
  metricIds?: string[];
  /** Per-branch liquidity in credits; default: the workspace's defaultProposalLiquidityCredits. */
  liquidity?: number;
  deadline?: Date;
}

export interface Proposer {
  agentId: string;
  /** Owner, admin (manage) or master key: may post on a workspace closed to outside proposals. */
  canManage: boolean;
  metricReadable: (id: string) => boolean;
}

/**
 * Create a proposal and its branch books in one transaction. The proposer pays 2 x liquidity per
 * proposer-funded pair up front (their balance row locked), else 400 insufficient_balance and
 * nothing is created; owner-subsidised dates the owner cannot pay are skipped and reported.
 */
export async function createProposal(deps: Deps, workspace: { id: string; ownerId: string; externalProposals: boolean; defaultProposalLiquidity: bigint }, who: Proposer, input: CreateProposalInput): Promise<string> {
  if (!workspace.externalProposals && !who.canManage) {
    throw new DomainError('external_proposals_disabled', 'This workspace takes proposals from its owner and admins only; nothing was created.');
  }
  const now = deps.clock.now();
  if (input.deadline && input.deadline.getTime() <= now.getTime()) {
    throw new DomainError('validation_failed', `The deadline must be in the future (it is ${now.toISOString()} now).`);
  }
  const liquidity = input.liquidity === undefined ? workspace.defaultProposalLiquidity : toNano(input.liquidity);
  return inTransaction(deps.ds, async (m) => {
    const expected = await checkExpectedMetrics(m, workspace.id, input.metricIds ?? [], who.metricReadable);
    const metrics = await leafMetrics(m, workspace.id, expected);
    const plans = planPairs(now, metrics, liquidity);
    const headline = plans[0] ?? null;
    const [row] = await m.query(
      `INSERT INTO proposals (workspace_id, title, description, proposed_by, liquidity, metric_ids, headline_metric_id, headline_target_date, deadline, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7, $8, $9, $10, $10) RETURNING id`,
      [workspace.id, input.title, input.description ?? '', who.agentId, liquidity.toString(), expected, headline?.metric.id ?? null, headline?.period.targetDate ?? null, input.deadline ?? null, now],
    );
    const p = (await findProposal(m, workspace.id, row.id)) as ProposalRow;

    const proposerPlans = plans.filter((x) => x.payer === 'proposer');
    const cost = 2n * liquidity * BigInt(proposerPlans.length);
    if (cost > 0n) {
      const balance = (await balanceOf(m, accountId.agent(who.agentId), true)) ?? 0n;
      if (balance < cost) {
        throw insufficientBalance(balance, cost, {
          purpose: `to fund ${proposerPlans.length * 2} conditional books at ${toCredits(liquidity)} credits each`,
          note: 'Nothing was created.',
        });
      }
    }
    // Proposer-funded pairs in one batch: the balance check above guarantees them.
    const paid = await openBooks(m, (await pairInputs(m, p, proposerPlans)).flat());
    if (paid.length !== 2 * proposerPlans.length || paid.some((mk) => liquidity > 0n && !mk.funded)) {
      throw new Error(`proposal ${p.id}: proposer-funded books did not all open funded after the balance check`);
    }
    const owner = await openPairsOrSkip(m, await pairInputs(m, p, plans.filter((x) => x.payer === 'owner')));
    const count = paid.length + owner.opened.length;
    await emitEvent(m, workspace.id, 'proposal:created', {
      proposalId: p.id,
      title: p.title,
      proposedBy: who.agentId,
      liquiditySubsidy: toCredits(liquidity),
      conditionalMarketCount: count,
    });
    if (owner.skipped.length) await emitEvent(m, workspace.id, 'proposal:subsidy_skipped', { proposalId: p.id, skipped: owner.skipped });
    return p.id;
  });
}

/**
 * Open the branch pairs a pending proposal is missing at `now` (a new primary month, a rolled
 * subsidised date, a new leaf metric), each paid again by its contributor; a contributor who cannot
 * pay is skipped and reported with proposal:subsidy_skipped. Idempotent through the live-book key.
 * The horizon pass (lifecycle) calls it per pending proposal.
 */
export async function respawnProposalBranches(m: EntityManager, proposalId: string, now: Date): Promise<{ opened: MarketRow[]; skipped: SkippedContributor[] }> {
  const rows = await m.query(`${PROPOSAL_SELECT} WHERE p.id = $1 FOR UPDATE OF p`, [proposalId]);
  if (!rows.length) return { opened: [], skipped: [] };
  const p = rowToProposal(rows[0]);
  if (p.status !== 'pending' || (p.deadline && p.deadline.getTime() <= now.getTime()) || !p.proposedBy) return { opened: [], skipped: [] };
  const live: Array<{ metric_id: string; target_date: string }> = await m.query(
    `SELECT DISTINCT metric_id, target_date FROM markets WHERE proposal_id = $1 AND status IN ('open','closed')`,
    [p.id],
  );
  const have = new Set(live.map((r) => `${r.metric_id}|${r.target_date}`));
  const plans = planPairs(now, await leafMetrics(m, p.workspaceId, p.metricIds), p.liquidity).filter((x) => !have.has(`${x.metric.id}|${x.period.targetDate}`));
  const { opened, skipped } = await openPairsOrSkip(m, await pairInputs(m, p, plans));
  if (skipped.length) await emitEvent(m, p.workspaceId, 'proposal:subsidy_skipped', { proposalId: p.id, skipped });
  return { opened, skipped };
}

// ---------- decisions ----------

export type Decision = 'approve' | 'decline' | 'withdraw';

export interface DecisionInput {
  decision: Decision;
  spam?: boolean;
  agentId: string;
  canManage: boolean;
}

const TARGET: Record<Decision, ProposalStatus> = { approve: 'approved', decline: 'declined', withdraw: 'withdrawn' };

/** Which branches a decision voids (spec §3.1): approve voids declined, decline voids approved, withdraw or spam void both. */
function branchesToVoid(d: DecisionInput): Set<Branch> {
  if (d.decision === 'withdraw' || (d.decision === 'decline' && d.spam)) return new Set<Branch>(['approved', 'declined']);
  return new Set<Branch>([d.decision === 'approve' ? 'declined' : 'approved']);
}

/**
 * Decide a pending proposal in ONE transaction: the proposal row locked, then every live branch book
 * locked in id order (the lock a trade takes first), both branches closed with close_reason
 * 'proposal_closed', the branch(es) the decision rules out voided and refunded, the status written
 * and proposal:status_changed emitted. A trade waiting on a book's lock sees the closed book once
 * this commits, so no trade applies after the decision.
 */
export async function decideProposal(deps: Deps, workspaceId: string, proposalId: string, d: DecisionInput): Promise<void> {
  await inTransaction(deps.ds, async (m) => {
    const p = await findProposal(m, workspaceId, proposalId, true);
    if (!p) throw proposalNotFound(proposalId);
    if (d.decision === 'withdraw' && !d.canManage && p.proposedBy !== d.agentId) {
      throw new DomainError('not_authorized', 'Only the proposer, or a holder of manage, may withdraw this proposal.', { requiredCapabilities: ['manage'] });
    }
    if (p.status !== 'pending') {
      throw new DomainError(
        'conflict',
        `This proposal was already ${p.status}${p.decidedAt ? ` on ${p.decidedAt.toISOString()}` : ''}; a decision is final.`,
        { status: p.status },
      );
    }
    const now = deps.clock.now();
    const ids: Array<{ id: string }> = await m.query(`SELECT id FROM markets WHERE proposal_id = $1 AND status IN ('open','closed') ORDER BY id`, [p.id]);
    const books: MarketRow[] = [];
    for (const { id } of ids) {
      const mk = await lockMarket(m, id);
      if (mk && (mk.status === 'open' || mk.status === 'closed')) books.push(mk);
    }
    const [{ seq }] = await m.query(`SELECT max(seq)::text AS seq FROM trades WHERE market_id = ANY($1::uuid[])`, [books.map((b) => b.id)]);
    if (books.length) {
      await m.query(`UPDATE markets SET close_reason = 'proposal_closed', updated_at = $2 WHERE id = ANY($1::uuid[])`, [books.map((b) => b.id), now]);
    }
    const toVoid = branchesToVoid(d);
    const target = TARGET[d.decision];
    const reason = d.spam && d.decision === 'decline' ? 'proposal declined as spam' : `proposal ${target}`;
    for (const mk of books) {
      if (mk.branch && toVoid.has(mk.branch)) {
        await voidLockedMarket(m, { ...mk, closeReason: 'proposal_closed' }, reason, now);
      } else {
        await emitEvent(m, mk.workspaceId, 'market:closed', { marketId: mk.id, reason: 'proposal_closed', proposalId: p.id, branch: mk.branch });
      }
    }
    await m.query(
      `UPDATE proposals SET status = $2, spam = $3, decided_by = $4, decided_at = $5, decision_trade_seq = $6, updated_at = $5 WHERE id = $1`,
      [p.id, target, d.decision === 'decline' && d.spam === true, d.agentId, now, seq],
    );
    await markScorecardDecision(m, p.id, target);
    await emitEvent(m, workspaceId, 'proposal:status_changed', {
      proposalId: p.id,
      fromStatus: p.status,
      toStatus: target,
      decidedBy: d.agentId,
      ...(d.decision === 'decline' && d.spam ? { spam: true } : {}),
    });
  });
}

// ---------- reads ----------

export interface ProposalView {
  proposal: ProposalRow;
  /** Every branch book of the proposal, live or not. */
  markets: MarketRow[];
  scorecard: ScorecardRow[];
}

async function branchBooks(m: DataSource | EntityManager, proposalIds: string[]): Promise<Map<string, MarketRow[]>> {
  const out = new Map<string, MarketRow[]>(proposalIds.map((id) => [id, []]));
  if (!proposalIds.length) return out;
  const rows = await m.query(
    `${MARKET_SELECT} WHERE mk.proposal_id = ANY($1::uuid[]) ORDER BY mt.sort_order, mk.period_end NULLS LAST, mk.created_at, mk.branch`,
    [proposalIds],
  );
  for (const r of rows) out.get(r.proposal_id)?.push(rowToMarket(r));
  return out;
}

async function views(m: DataSource | EntityManager, proposals: ProposalRow[]): Promise<ProposalView[]> {
  const ids = proposals.map((p) => p.id);
  const books = await branchBooks(m, ids);
  const cards = await scorecardOf(m, ids);
  return proposals.map((p) => ({ proposal: p, markets: books.get(p.id) ?? [], scorecard: cards.get(p.id) ?? [] }));
}

export async function getProposal(m: DataSource | EntityManager, workspaceId: string, id: string): Promise<ProposalView> {
  const p = await findProposal(m, workspaceId, id);
  if (!p) throw proposalNotFound(id);
  return (await views(m, [p]))[0];
}

export type BranchImpact = DomainBranchImpact<MarketRow>;
export type ImpactEntry = DomainImpactEntry<MarketRow>;
export { headlineImpact };

/** The impact maths (domain/proposalImpact) over this service's books and their consensus. */
export function proposalImpact(p: ImpactBasis, markets: MarketRow[]): ImpactEntry[] {
  return impactOf(p, markets, marketConsensus);
}

export interface ListProposalsQuery {
  status?: ProposalStatus;
  sort: 'created' | 'impact';
  limit: number;
  offset: number;
}

/** A page of proposals, newest first or by |headline impact| (nulls last), with the total matching. */
export async function listProposals(ds: DataSource, workspaceId: string, q: ListProposalsQuery): Promise<{ items: ProposalView[]; total: number }> {
  const args: unknown[] = [workspaceId, q.status ?? null];
  const where = `p.workspace_id = $1 AND ($2::text IS NULL OR p.status = $2)`;
  const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM proposals p WHERE ${where}`, args);
  let pageIds: string[];
  if (q.sort === 'impact') {
    // Only the headline pair of every matching proposal is loaded to rank them.
    const rows = await ds.query(
      `SELECT p.id AS pid, p.seq AS p_seq, p.metric_ids AS p_metric_ids, p.headline_metric_id AS p_hm, p.headline_target_date AS p_hd, mk.*, mt.name AS metric_name
         FROM proposals p
         LEFT JOIN markets mk ON mk.proposal_id = p.id AND mk.metric_id = p.headline_metric_id AND mk.target_date = p.headline_target_date
         LEFT JOIN metrics mt ON mt.id = mk.metric_id
        WHERE ${where}`,
      args,
    );
    const ranked = new Map<string, { seq: bigint; markets: MarketRow[]; p: ImpactBasis }>();
    for (const r of rows) {
      let e = ranked.get(r.pid);
      if (!e) {
        e = { seq: BigInt(r.p_seq), markets: [], p: { metricIds: r.p_metric_ids ?? [], headlineMetricId: r.p_hm, headlineTargetDate: r.p_hd } };
        ranked.set(r.pid, e);
      }
      if (r.id) e.markets.push(rowToMarket(r));
    }
    const scored = [...ranked.entries()].map(([id, e]) => ({ id, seq: e.seq, impact: headlineImpact(e.p, proposalImpact(e.p, e.markets)) }));
    scored.sort((a, b) => {
      if (a.impact === null || b.impact === null) {
        if (a.impact !== b.impact) return a.impact === null ? 1 : -1;
      } else if (Math.abs(b.impact) !== Math.abs(a.impact)) return Math.abs(b.impact) - Math.abs(a.impact);
      return b.seq > a.seq ? 1 : b.seq < a.seq ? -1 : 0;
    });
    pageIds = scored.slice(q.offset, q.offset + q.limit).map((s) => s.id);
  } else {
    const rows = await ds.query(`SELECT p.id FROM proposals p WHERE ${where} ORDER BY p.created_at DESC, p.seq DESC LIMIT $3 OFFSET $4`, [...args, q.limit, q.offset]);
    pageIds = rows.map((r: { id: string }) => r.id);
  }
  if (!pageIds.length) return { items: [], total: n };
  const rows = await ds.query(`${PROPOSAL_SELECT} WHERE p.id = ANY($1::uuid[])`, [pageIds]);
  const byId = new Map<string, ProposalRow>(rows.map((r: Record<string, unknown>) => [r.id as string, rowToProposal(r)]));
  const ordered = pageIds.map((id) => byId.get(id)).filter((p): p is ProposalRow => !!p);
  return { items: await views(ds, ordered), total: n };
}

// ---------- discussion ----------

export interface CommentRow {
  id: string;
  proposalId: string;
  authorId: string | null;
  authorNickname: string | null;
  parentId: string | null;
  body: string;
  createdAt: Date;
}

const COMMENT_SELECT = `SELECT c.*, a.nickname AS author_nickname FROM proposal_comments c LEFT JOIN agents a ON a.id = c.author_id`;

function rowToComment(r: Record<string, any>): CommentRow { // eslint-disable-line @typescript-eslint/no-explicit-any
  return { id: r.id, proposalId: r.proposal_id, authorId: r.author_id, authorNickname: r.author_nickname ?? null, parentId: r.parent_id, body: r.body, createdAt: r.created_at };
}

/** A comment (optionally a reply to another comment on the same proposal), decided proposals included. */
export async function addComment(deps: Deps, workspaceId: string, proposalId: string, authorId: string, input: { body: string; parentId?: string }): Promise<CommentRow> {
  return inTransaction(deps.ds, async (m) => {
    const p = await findProposal(m, workspaceId, proposalId);
    if (!p) throw proposalNotFound(proposalId);
    if (input.parentId) {
      const parent = await m.query(`SELECT 1 FROM proposal_comments WHERE id = $1 AND proposal_id = $2`, [input.parentId, p.id]);
      if (!parent.length) throw new DomainError('validation_failed', `parentId "${input.parentId}" is not a comment on this proposal.`);
    }
    const [row] = await m.query(
      `INSERT INTO proposal_comments (proposal_id, workspace_id, author_id, parent_id, body, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [p.id, workspaceId, authorId, input.parentId ?? null, input.body, deps.clock.now()],
    );
    return rowToComment((await m.query(`${COMMENT_SELECT} WHERE c.id = $1`, [row.id]))[0]);
  });
}

/** Comments oldest first (newest last), with the total. */
export async function listComments(ds: DataSource, workspaceId: string, proposalId: string, page: { limit: number; offset: number }): Promise<{ items: CommentRow[]; total: number }> {
  const p = await findProposal(ds, workspaceId, proposalId);
  if (!p) throw proposalNotFound(proposalId);
  const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM proposal_comments WHERE proposal_id = $1`, [p.id]);
  const rows = await ds.query(`${COMMENT_SELECT} WHERE c.proposal_id = $1 ORDER BY c.seq LIMIT $2 OFFSET $3`, [p.id, page.limit, page.offset]);
  return { items: rows.map(rowToComment), total: n };
}

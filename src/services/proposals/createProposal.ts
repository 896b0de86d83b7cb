/** Creating a proposal: its row and its branch books, paid up front by the proposer (owner-subsidised dates by the owner). */
import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { onceByKey } from '../idempotency';
import { rolledBack } from '../../db/dryRun';
import { Proposal } from '../../entities/proposal';
import { DomainError } from '../../errors';
import { formatCredits, toNano } from '../../domain/money';
import { accountId, balanceOf, insufficientBalance } from '../ledger';
import { costOfOpening, openBooks, type BookCost, type UnfundedBook } from '../books';
import { emitEvent } from '../events';
import { leafMetrics, openPairsOrSkip, pairInputs, planPairs } from './branchPairs';
import { isUuid } from './proposalRows';
import { consumePoint } from '../access';
import { rows } from '../../db/queryRows';

/** metricIds must name leaf metrics of this workspace the caller can read; duplicates collapse. */
async function checkExpectedMetrics(m: EntityManager, workspaceId: string, ids: string[], readable: (id: string) => boolean): Promise<string[]> {
  const unique = [...new Set(ids)];
  if (!unique.length) return [];
  const malformed = unique.filter((id) => !isUuid(id));
  const rows: Array<{ id: string; name: string; is_leaf: boolean }> = await m.query(
    `SELECT id, name, is_leaf FROM metrics WHERE workspace_id = $1 AND id = ANY($2::uuid[])`,
    [workspaceId, unique.filter((id) => isUuid(id))],
  );
  const found = new Map(rows.filter((r) => readable(r.id)).map((r) => [r.id, r]));
  const missing = [...malformed, ...unique.filter((id) => isUuid(id) && !found.has(id))];
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

/**
 * Books a proposal opens without subsidy cost the proposer nothing, so their number is bounded: a
 * participant's proposals may hold at most `cap` unfunded live books in a workspace (this one's
 * included, in its own transaction). 409 conflict past it, and nothing is created.
 */
async function refuseTooManyFreeBooks(m: EntityManager, cap: number, workspaceId: string, agentId: string, opened: number): Promise<void> {
  if (opened === 0) return;
  const [{ n }] = await rows<{ n: number }>(
    m,
    `SELECT count(*)::int AS n FROM proposals p JOIN markets mk ON mk.proposal_id = p.id
      WHERE p.proposed_by = $2 AND p.workspace_id = $1 AND mk.status IN ('open','closed') AND NOT mk.funded`,
    [workspaceId, agentId],
  );
  if (n > cap) {
    throw new DomainError(
      'conflict',
      `Your proposals would hold ${n} unfunded books open in this workspace; at most ${cap} are allowed. Give this proposal liquidity (its books are then funded), or withdraw earlier proposals without liquidity. Nothing was created.`,
      { unfundedBooks: n, limit: cap },
    );
  }
}

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
  /** The master key or the workspace owner: not bound by the free-creation limits (issue 26). */
  exempt?: boolean;
}

/** A new proposal and what its branch books cost (issue 28). */
export interface CreatedProposal {
  id: string;
  books: BookCost[];
  /** Credits moved into the branch books, by the proposer and the owner (nano). */
  spent: bigint;
  unfunded: UnfundedBook[];
  /** What the proposer pays (nano): 2 x liquidity per proposer-funded pair. */
  planned: bigint;
  /** The proposer's balance before (nano). */
  balanceBefore: bigint;
  /** A dry run only: the refusal the real call would answer instead of creating (the proposer cannot pay). */
  refusal: DomainError | null;
}

/**
 * Create a proposal and its branch books in one transaction. The proposer pays 2 x liquidity per
 * proposer-funded pair up front (their balance row locked), else 400 insufficient_balance and
 * nothing is created; owner-subsidised dates the owner cannot pay are skipped and reported.
 * A dry run does all of it in a transaction that is rolled back; a proposer short of the cost is
 * then answered (balanceCovers false) rather than refused.
 */
export async function createProposal(
  deps: Deps,
  workspace: { id: string; ownerId: string; externalProposals: boolean; defaultProposalLiquidity: bigint },
  who: Proposer,
  input: CreateProposalInput,
  /** manager: run inside the caller's transaction (onboarding templates) instead of one of its own. */
  /** idempotencyKey: the books are paid for, so a retry with the key answers the first outcome. */
  opts: { dryRun?: boolean; manager?: EntityManager; idempotencyKey?: string } = {},
): Promise<CreatedProposal> {
  if (!workspace.externalProposals && !who.canManage) {
    throw new DomainError('external_proposals_disabled', 'This workspace takes proposals from its owner and admins only; nothing was created.');
  }
  const now = deps.clock.now();
  if (input.deadline && input.deadline.getTime() <= now.getTime()) {
    throw new DomainError('validation_failed', `The deadline must be in the future (it is ${now.toISOString()} now).`);
  }
  const liquidity = input.liquidity === undefined ? workspace.defaultProposalLiquidity : toNano(input.liquidity);
  const limited = !who.exempt && !opts.manager;
  if (limited && !opts.dryRun) await consumePoint(deps, 'proposal', who.agentId);
  const run = async (m: EntityManager): Promise<CreatedProposal> => {
    const expected = await checkExpectedMetrics(m, workspace.id, input.metricIds ?? [], who.metricReadable);
    const metrics = await leafMetrics(m, workspace.id, expected);
    const plans = planPairs(now, metrics, liquidity);
    const headline = plans[0] ?? null;
    const p = await m.save(
      m.create(Proposal, {
        workspaceId: workspace.id,
        title: input.title,
        description: input.description ?? '',
        proposedBy: who.agentId,
        liquidity,
        metricIds: expected,
        headlineMetricId: headline?.metric.id ?? null,
        headlineTargetDate: headline?.period.targetDate ?? null,
        deadline: input.deadline ?? null,
        createdAt: now,
        updatedAt: now,
      }),
    );

    const proposerPlans = plans.filter((x) => x.payer === 'proposer');
    const cost = 2n * liquidity * BigInt(proposerPlans.length);
    const balance = (await balanceOf(m, accountId.agent(who.agentId), cost > 0n)) ?? 0n;
    // One rule with its dry run: a proposer who cannot fund every book is refused, and the dry run
    // says so (refusal) instead of showing books that would open unfunded.
    const refusal =
      cost > 0n && balance < cost
        ? insufficientBalance(balance, cost, {
            purpose: `to fund ${proposerPlans.length * 2} conditional books at ${formatCredits(liquidity)} credits each`,
            note: 'Nothing was created.',
          })
        : null;
    if (refusal && !opts.dryRun) throw refusal;
    // Proposer-funded pairs in one batch: the balance check above guarantees them.
    const paidInputs = (await pairInputs(m, p, proposerPlans)).flat();
    const paid = await openBooks(m, paidInputs);
    if (!opts.dryRun && (paid.length !== 2 * proposerPlans.length || paid.some((mk) => liquidity > 0n && !mk.funded))) {
      throw new Error(`proposal ${p.id}: proposer-funded books did not all open funded after the balance check`);
    }
    const ownerInputs = await pairInputs(m, p, plans.filter((x) => x.payer === 'owner'));
    const owner = await openPairsOrSkip(m, ownerInputs);
    if (limited) await refuseTooManyFreeBooks(m, deps.config.FREE_BOOKS_PER_PARTICIPANT, workspace.id, who.agentId, [...paid, ...owner.opened].filter((mk) => !mk.funded).length);
    const count = paid.length + owner.opened.length;
    await emitEvent(m, workspace.id, 'proposal:created', {
      proposalId: p.id,
      title: p.title,
      proposedBy: who.agentId,
      liquiditySubsidy: liquidity,
      conditionalMarketCount: count,
    });
    if (owner.skipped.length) await emitEvent(m, workspace.id, 'proposal:subsidy_skipped', { proposalId: p.id, skipped: owner.skipped });
    const opening = costOfOpening([...paid, ...owner.opened], [...paidInputs, ...ownerInputs.flat()]);
    return { id: p.id, ...opening, planned: cost, balanceBefore: balance, refusal };
  };
  if (opts.manager) return run(opts.manager);
  if (opts.dryRun) return rolledBack(deps.ds, run);
  return inTransaction(deps.ds, async (m) => (await onceByKey(m, { participantId: who.agentId, scope: workspace.id, key: opts.idempotencyKey, request: ['POST /proposals', input] }, () => run(m))).value);
}

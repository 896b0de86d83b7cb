/** Deciding a pending proposal: approve, decline (or decline as spam) or withdraw, voiding and refunding the branches ruled out. */
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { rows } from '../../db/queryRows';
import { Proposal } from '../../entities/proposal';
import { DomainError } from '../../errors';
import { policies } from '../access';
import { closeOrdersOf, lockMarket, setCloseReason, type MarketRow } from '../books';
import { voidLockedMarket } from '../lifecycle';
import { emitEvent } from '../events';
import { withOneLedgerWrite } from '../ledger';
import { recordDecision } from '../trackRecord';
import { markScorecardDecision } from './scorecard';
import { lockProposal, proposalNotFound, type Branch, type ProposalStatus } from './proposalRows';

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
 * 'proposal_closed', the branch(es) the decision rules out voided and refunded (every refund in one
 * ledger statement, last: no deadlock with a lane batch), the status written and
 * proposal:status_changed emitted. A trade waiting on a book's lock sees the closed book once
 * this commits, so no trade applies after the decision.
 */
export async function decideProposal(deps: Deps, workspaceId: string, proposalId: string, d: DecisionInput): Promise<void> {
  await inTransaction(deps.ds, async (m) => {
    const p = await lockProposal(m, proposalId, workspaceId);
    if (!p) throw proposalNotFound(proposalId);
    // Re-checked in the transaction: the proposer is read from the locked row (the policy: proposals.requireMayWithdraw).
    if (d.decision === 'withdraw') policies.proposals.requireMayWithdraw({ agentId: d.agentId, canManage: d.canManage }, p.proposedBy);
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
    const [{ seq }] = await rows<{ seq: string | null }>(m, `SELECT max(seq)::text AS seq FROM trades WHERE market_id = ANY($1::uuid[])`, [books.map((b) => b.id)]);
    const toVoid = branchesToVoid(d);
    const target = TARGET[d.decision];
    const reason = d.spam && d.decision === 'decline' ? 'proposal declined as spam' : `proposal ${target}`;
    // The reserves' and the voids' refunds in one ledger statement, after every book lock.
    await withOneLedgerWrite(
      m,
      async (legs) => {
        if (books.length) {
          await setCloseReason(m, books.map((b) => b.id), 'proposal_closed', now);
          // Closed branches take no more buys: their resting orders are cancelled, reserves returned.
          await closeOrdersOf(m, books.map((b) => b.id), 'cancelled', 'proposal decided', now, legs);
        }
        for (const mk of books) {
          if (mk.branch && toVoid.has(mk.branch)) {
            await voidLockedMarket(m, { ...mk, closeReason: 'proposal_closed' }, reason, now, legs);
          } else {
            await emitEvent(m, mk.workspaceId, 'market:closed', { marketId: mk.id, reason: 'proposal_closed', proposalId: p.id, branch: mk.branch });
          }
        }
      },
      { shortfall: 'internal' },
    );
    await m.update(Proposal, { id: p.id }, {
      status: target,
      spam: d.decision === 'decline' && d.spam === true,
      decidedBy: d.agentId,
      decidedAt: now,
      decisionTradeSeq: seq === null ? null : BigInt(seq),
      updatedAt: now,
    });
    await markScorecardDecision(m, p.id, target);
    await recordDecision(m, p.id, target, now);
    await emitEvent(m, workspaceId, 'proposal:status_changed', {
      proposalId: p.id,
      fromStatus: p.status,
      toStatus: target,
      decidedBy: d.agentId,
      ...(d.decision === 'decline' && d.spam ? { spam: true } : {}),
    });
  });
}

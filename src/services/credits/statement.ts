import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { badRequest } from '../../errors';
import { resolveOwnedAgent } from '../access';
import { accountId } from '../ledger';

/**
 * GET /agents/{id}/ledger: a participant's statement. Every ledger leg of its account, newest first,
 * with what it was (the statement kind, mapped from the ledger's own kind), its signed amount, the
 * balance right after it (a running sum over the account's rows in ledger order, computed in SQL on
 * nano-credits, so it is exact), and what caused it as far as the ledger row's ref says.
 */

/** The ledger's kinds as the statement names them. A kind not listed here is `other` (the raw kind is shown too). */
export const STATEMENT_KINDS = {
  trade: 'trade',
  redeem: 'trade',
  order_reserve: 'order',
  order_refund: 'order_refund',
  payout: 'payout',
  refund: 'refund',
  fund: 'subsidy',
  pool_return: 'subsidy_return',
  transfer: 'transfer',
  mint: 'credit',
  credit: 'credit',
  child_funding: 'credit',
  signup_grant: 'signup_grant',
  deposit: 'deposit',
  withdrawal: 'withdrawal',
  withdrawal_restore: 'withdrawal_restore',
  participant_deleted: 'closure',
} as const;
export type StatementKind = (typeof STATEMENT_KINDS)[keyof typeof STATEMENT_KINDS] | 'spend' | 'other';
export const STATEMENT_KIND_LIST: readonly StatementKind[] = [...new Set<StatementKind>([...Object.values(STATEMENT_KINDS), 'spend', 'other'])];

export function statementKindOf(ledgerKind: string): StatementKind {
  if (ledgerKind.startsWith('spend:')) return 'spend';
  return (STATEMENT_KINDS as Record<string, StatementKind>)[ledgerKind] ?? 'other';
}

/** What caused a leg, by the ledger row's ref (only the fields that apply are set). */
export interface LegCause {
  marketId?: string;
  proposalId?: string;
  branch?: string;
  transferId?: string;
  depositId?: string;
  withdrawalId?: string;
  orderId?: string;
  spendId?: string;
  /** Who credited it (mint, credit, a bot's initial credits: the operator's, the manager's or the creator's participant id). */
  creditedBy?: string;
}

export interface StatementLeg {
  id: string;
  ledgerTransferId: string;
  ledgerKind: string;
  kind: StatementKind;
  amount: bigint;
  balanceAfter: bigint;
  createdAt: Date;
  memo: string | null;
  cause: LegCause;
}

export interface Statement {
  agentId: string;
  balance: bigint;
  legs: StatementLeg[];
  nextCursor: string | null;
}

/** The ledger kinds whose ref is a market id (joined for its proposal and branch). */
const MARKET_KINDS = ['trade', 'redeem', 'payout', 'refund', 'fund', 'pool_return'];

function causeOf(kind: string, ref: string | null, mk: { market_id: string | null; proposal_id: string | null; branch: string | null }): LegCause {
  if (!ref) return {};
  if (MARKET_KINDS.includes(kind)) {
    return { marketId: ref, ...(mk.proposal_id ? { proposalId: mk.proposal_id } : {}), ...(mk.branch ? { branch: mk.branch } : {}) };
  }
  if (kind === 'transfer') return { transferId: ref };
  if (kind === 'deposit') return { depositId: ref };
  if (kind.startsWith('withdrawal')) return { withdrawalId: ref };
  if (kind === 'order_reserve' || kind === 'order_refund') return { orderId: ref };
  if (kind.startsWith('spend:')) return { spendId: ref };
  if (kind === 'mint' || kind === 'credit' || kind === 'child_funding') return { creditedBy: ref };
  return {};
}

const encodeCursor = (id: string) => Buffer.from(`ledger:${id}`).toString('base64url');
function decodeCursor(cursor: string): string {
  const m = /^ledger:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw badRequest('The query field "cursor" is refused: pass the nextCursor of a previous page unchanged.');
  return m[1];
}

export async function ledgerStatement(deps: Deps, actor: Principal, idParam: string, opts: { limit: number; cursor?: string }): Promise<Statement> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam, 'read its ledger');
  const before = opts.cursor ? decodeCursor(opts.cursor) : null;
  const account = accountId.agent(agentId);
  // One snapshot: the balance and the running sums agree even while the account moves.
  return deps.ds.transaction('REPEATABLE READ', async (m) => {
    const acc: Array<{ balance: string }> = await m.query(`SELECT balance::text AS balance FROM accounts WHERE id = $1`, [account]);
    const rows: Array<{
      id: string;
      transfer_id: string;
      kind: string;
      amount: string;
      balance_after: string;
      ref: string | null;
      memo: string | null;
      created_at: Date;
      market_id: string | null;
      proposal_id: string | null;
      branch: string | null;
    }> = await m.query(
      `WITH legs AS (
         SELECT le.id, le.transfer_id, le.kind, le.amount, le.ref, le.memo, le.created_at,
                sum(le.amount) OVER (ORDER BY le.id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS balance_after
           FROM ledger_entries le WHERE le.account_id = $1)
       SELECT l.id::text, l.transfer_id, l.kind, l.amount::text, l.balance_after::text, l.ref, l.memo, l.created_at,
              mk.id AS market_id, mk.proposal_id, mk.branch
         FROM legs l
         LEFT JOIN markets mk
           ON mk.id = CASE WHEN l.kind = ANY($4::text[]) AND l.ref ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN l.ref::uuid END
        WHERE ($2::bigint IS NULL OR l.id < $2::bigint)
        ORDER BY l.id DESC
        LIMIT $3`,
      [account, before, opts.limit + 1, MARKET_KINDS],
    );
    const page = rows.slice(0, opts.limit);
    return {
      agentId,
      balance: acc.length ? BigInt(acc[0].balance) : 0n,
      legs: page.map((r) => ({
        id: r.id,
        ledgerTransferId: r.transfer_id,
        ledgerKind: r.kind,
        kind: statementKindOf(r.kind),
        amount: BigInt(r.amount),
        balanceAfter: BigInt(r.balance_after),
        createdAt: r.created_at,
        memo: r.memo,
        cause: causeOf(r.kind, r.ref, r),
      })),
      nextCursor: rows.length > opts.limit ? encodeCursor(page[page.length - 1].id) : null,
    };
  });
}

import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../errors';
import type { AccountKind } from '../../entities/ledger';
import { toCredits } from '../../domain/money';

export const accountId = {
  agent: (id: string) => `agent:${id}`,
  pool: (marketId: string) => `pool:${marketId}`,
  issuance: 'issuance',
  treasury: 'treasury',
} as const;

export async function openAccount(m: EntityManager, id: string, kind: AccountKind): Promise<void> {
  await m.query(`INSERT INTO accounts (id, kind) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [id, kind]);
}

export interface Movement {
  from: string;
  to: string;
  amount: bigint;
  kind: string;
  ref?: string | null;
  memo?: string | null;
  /** HTTP status for a shortfall: 400 in trading, 409 on transfers and credit moves (spec §7). */
  shortfallStatus?: number;
}

/**
 * Move credits between two accounts in one statement: the debit is conditional on the balance
 * (participant and pool accounts never go negative), and both ledger rows are written only when
 * it applied. Runs inside the caller's transaction.
 */
export async function move(m: EntityManager, mv: Movement): Promise<{ fromBalance: bigint; toBalance: bigint }> {
  if (mv.amount <= 0n) throw new RangeError(`ledger movement must be positive, got ${mv.amount}`);
  if (mv.from === mv.to) throw new RangeError('ledger movement needs two accounts');
  const amount = mv.amount.toString();
  const rows: Array<{ from_balance: string | null; to_balance: string | null }> = await m.query(
    `WITH d AS (
       UPDATE accounts SET balance = balance - $3::bigint
        WHERE id = $1 AND (kind NOT IN ('participant','pool') OR balance >= $3::bigint)
        RETURNING balance),
     c AS (
       UPDATE accounts SET balance = balance + $3::bigint
        WHERE id = $2 AND EXISTS (SELECT 1 FROM d)
        RETURNING balance),
     e AS (
       INSERT INTO ledger_entries (transfer_id, account_id, amount, kind, ref, memo)
       SELECT $4::uuid, x.acc, x.amt, $5, $6, $7
         FROM (VALUES ($1::text, -$3::bigint), ($2::text, $3::bigint)) AS x(acc, amt)
        WHERE EXISTS (SELECT 1 FROM d))
     SELECT (SELECT balance FROM d) AS from_balance, (SELECT balance FROM c) AS to_balance`,
    [mv.from, mv.to, amount, randomUUID(), mv.kind, mv.ref ?? null, mv.memo ?? null],
  );
  const r = rows[0];
  if (r.from_balance === null) {
    const bal = await balanceOf(m, mv.from);
    if (bal === null) throw new Error(`ledger account ${mv.from} does not exist`);
    throw new ApiError(
      'insufficient_balance',
      `Not enough credits: the balance is ${toCredits(bal)} and this needs ${toCredits(mv.amount)}.`,
      { balance: toCredits(bal), cost: toCredits(mv.amount) },
      mv.shortfallStatus,
    );
  }
  if (r.to_balance === null) throw new Error(`ledger account ${mv.to} does not exist`);
  return { fromBalance: BigInt(r.from_balance), toBalance: BigInt(r.to_balance) };
}

export async function balanceOf(m: EntityManager | DataSource, id: string, lock = false): Promise<bigint | null> {
  const rows: Array<{ balance: string }> = await m.query(`SELECT balance FROM accounts WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows.length ? BigInt(rows[0].balance) : null;
}

export interface InvariantReport {
  ok: boolean;
  total: bigint;
  mismatchedAccounts: string[];
  unbalancedTransfers: number;
  negativeParticipants: string[];
}

/** The ledger invariant: accounts sum to zero, each balance equals its rows, each transfer balances. */
export async function checkLedgerInvariant(ds: DataSource | EntityManager): Promise<InvariantReport> {
  const run = async (m: EntityManager | DataSource) => {
    const [t] = await m.query(`SELECT coalesce(sum(balance), 0)::text AS total FROM accounts`);
    const mism: Array<{ id: string }> = await m.query(
      `SELECT a.id FROM accounts a
         LEFT JOIN (SELECT account_id, sum(amount) AS s FROM ledger_entries GROUP BY account_id) e ON e.account_id = a.id
        WHERE a.balance <> coalesce(e.s, 0)`,
    );
    const [u] = await m.query(`SELECT count(*)::int AS n FROM (SELECT 1 FROM ledger_entries GROUP BY transfer_id HAVING sum(amount) <> 0) x`);
    const neg: Array<{ id: string }> = await m.query(`SELECT id FROM accounts WHERE kind IN ('participant','pool') AND balance < 0`);
    const total = BigInt(t.total);
    return {
      ok: total === 0n && mism.length === 0 && u.n === 0 && neg.length === 0,
      total,
      mismatchedAccounts: mism.map((r) => r.id),
      unbalancedTransfers: u.n,
      negativeParticipants: neg.map((r) => r.id),
    };
  };
  if ('transaction' in ds && 'isInitialized' in ds) {
    // One snapshot so concurrent commits cannot make a sound ledger look broken.
    return (ds as DataSource).transaction('REPEATABLE READ', run);
  }
  return run(ds);
}

/**
 * One debit split across many credits (payouts, refunds, book funding) as a single balanced
 * transfer: three statements whatever the number of legs.
 */
export async function payMany(
  m: EntityManager,
  from: string,
  legs: Array<{ to: string; amount: bigint }>,
  kind: string,
  ref: string | null = null,
): Promise<bigint> {
  const byAccount = new Map<string, bigint>();
  for (const l of legs) if (l.amount > 0n) byAccount.set(l.to, (byAccount.get(l.to) ?? 0n) + l.amount);
  if (!byAccount.size) return 0n;
  if (byAccount.has(from)) throw new RangeError('ledger movement needs two accounts');
  const tos = [...byAccount.keys()];
  const amounts = tos.map((t) => byAccount.get(t)!.toString());
  const total = [...byAccount.values()].reduce((s, a) => s + a, 0n);
  const rows: Array<{ debited: number; credited: number }> = await m.query(
    `WITH d AS (
       UPDATE accounts SET balance = balance - $2::bigint
        WHERE id = $1 AND (kind NOT IN ('participant','pool') OR balance >= $2::bigint) RETURNING 1),
     c AS (
       UPDATE accounts a SET balance = a.balance + v.amt
         FROM unnest($3::text[], $4::bigint[]) AS v(acc, amt)
        WHERE a.id = v.acc AND EXISTS (SELECT 1 FROM d) RETURNING 1),
     e AS (
       INSERT INTO ledger_entries (transfer_id, account_id, amount, kind, ref)
       SELECT $5::uuid, x.acc, x.amt, $6, $7
         FROM (SELECT $1::text AS acc, -$2::bigint AS amt UNION ALL SELECT * FROM unnest($3::text[], $4::bigint[])) x
        WHERE EXISTS (SELECT 1 FROM d))
     SELECT (SELECT count(*) FROM d)::int AS debited, (SELECT count(*) FROM c)::int AS credited`,
    [from, total.toString(), tos, amounts, randomUUID(), kind, ref],
  );
  if (rows[0].debited !== 1) {
    const bal = await balanceOf(m, from);
    throw new ApiError('insufficient_balance', `Not enough credits: the balance is ${toCredits(bal ?? 0n)} and this needs ${toCredits(total)}.`, {
      balance: toCredits(bal ?? 0n),
      cost: toCredits(total),
    });
  }
  if (rows[0].credited !== tos.length) throw new Error(`ledger: ${tos.length - rows[0].credited} target account(s) missing`);
  return total;
}

/**
 * Ledger legs collected while settling many books, applied in one statement at the end: hot
 * accounts (a funder behind thousands of pools, a holder in many books) are locked once, late,
 * and in id order, instead of once per book.
 */
export class LedgerBatch {
  private legs: Array<{ from: string; to: string; amount: bigint; kind: string; ref: string | null }> = [];

  add(from: string, to: string, amount: bigint, kind: string, ref: string | null): void {
    if (amount < 0n) throw new RangeError('ledger legs must be positive');
    if (amount > 0n) this.legs.push({ from, to, amount, kind, ref });
  }

  get size(): number {
    return this.legs.length;
  }

  /** Drop the legs added since `mark` (a book rolled back to its savepoint). */
  discardFrom(mark: number): void {
    this.legs.length = mark;
  }

  async flush(m: EntityManager): Promise<void> {
    if (!this.legs.length) return;
    const legs = this.legs;
    this.legs = [];
    const accounts = [...new Set(legs.flatMap((l) => [l.from, l.to]))].sort();
    await m.query(`SELECT id FROM accounts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`, [accounts]);
    const [r] = await m.query(
      `WITH legs AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS l(frm, too, amt, kind, ref)),
       net AS (SELECT acc, sum(amt) AS amt FROM (SELECT frm AS acc, -amt AS amt FROM legs UNION ALL SELECT too, amt FROM legs) x GROUP BY acc),
       u AS (UPDATE accounts a SET balance = a.balance + net.amt FROM net
              WHERE a.id = net.acc AND (a.kind NOT IN ('participant','pool') OR a.balance + net.amt >= 0) RETURNING a.id),
       e AS (INSERT INTO ledger_entries (transfer_id, account_id, amount, kind, ref)
             SELECT t.tid, x.acc, x.amt, t.kind, t.ref
               FROM (SELECT gen_random_uuid() AS tid, * FROM legs) t
               CROSS JOIN LATERAL (VALUES (t.frm, -t.amt), (t.too, t.amt)) AS x(acc, amt))
       SELECT (SELECT count(*) FROM u)::int AS updated, (SELECT count(*) FROM net)::int AS expected`,
      [legs.map((l) => l.from), legs.map((l) => l.to), legs.map((l) => l.amount.toString()), legs.map((l) => l.kind), legs.map((l) => l.ref)],
    );
    // A short or missing account means a bug upstream: abort the whole transaction.
    if (r.updated !== r.expected) throw new Error(`ledger batch: ${r.expected - r.updated} account(s) missing or short`);
  }
}

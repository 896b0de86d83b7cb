import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { formatCredits } from '../../domain/money';
import { queryPrepared } from '../../db/prepared';
import { rows } from '../../db/queryRows';

/**
 * The one ledger writer. Every balance change and every ledger row goes through here: one debit to
 * one credit (`transfer`), one debit to many credits, or a batch of transfers (`writeLedger`), or a
 * fragment composed into a larger statement (`ledgerFragment`, the trade's single write). Whatever
 * the number of transfers, it is ONE statement that
 *   1. locks every account it touches once, in id order (a funder behind thousands of pools, a
 *      holder in many books, `issuance` on every mint: one lock each, never two orders);
 *   2. checks the no-overdraft rule on each account's net change (participant and pool accounts
 *      never go negative; `issuance` and `treasury` may);
 *   3. only if every account exists and none would go short, applies the net change to each
 *      account and writes the balanced ledger rows (each transfer's rows share a transfer id and
 *      sum to zero).
 * A refused write changes nothing, so a caller may catch the refusal and go on.
 */

/** One credit of a transfer. */
export interface Credit {
  to: string;
  amount: bigint;
}

/** One balanced transfer: `from` is debited the sum of its credits; its rows share a transfer id. */
export interface Transfer {
  from: string;
  credits: readonly Credit[];
  kind: string;
  ref?: string | null;
  memo?: string | null;
}

/**
 * What a shortfall is: a refusal (insufficient_balance; the edge picks its status: 400 in trading,
 * 409 on transfers and credit moves), or 'internal' where the caller has proved the money is there
 * (settlement pays out of pools it has just measured): a shortfall then is a bug and aborts.
 */
export type ShortfallPolicy = 'refuse' | 'internal';

export interface LedgerWriteOptions {
  shortfall?: ShortfallPolicy;
  /** Accounts locked with the write's own though it leaves them unchanged (a later statement of the transaction writes them). */
  touch?: readonly string[];
}

/** The insufficient_balance refusal, with the balance and the cost as details. */
export function insufficientBalance(balance: bigint, cost: bigint, opts: { purpose?: string; note?: string } = {}): DomainError {
  return new DomainError(
    'insufficient_balance',
    `Not enough credits${opts.purpose ? ` ${opts.purpose}` : ''}: the balance is ${formatCredits(balance)} and this needs ${formatCredits(cost)}.${opts.note ? ` ${opts.note}` : ''}`,
    { balance, cost },
  );
}

/** One debit to one credit, as a Transfer. */
export function leg(from: string, to: string, amount: bigint, kind: string, ref: string | null = null, memo: string | null = null): Transfer {
  return { from, credits: [{ to, amount }], kind, ref, memo };
}

/** The transfers flattened: net change per account (ids sorted) and the ledger rows. */
interface LedgerPlan {
  accounts: string[];
  nets: bigint[];
  /** Accounts debited, in the order the transfers name them: the first short one is reported. */
  debited: string[];
  rows: { tid: string[]; acc: string[]; amt: string[]; kind: string[]; ref: Array<string | null>; memo: Array<string | null> };
}

function planOf(transfers: readonly Transfer[], touch: readonly string[] = []): LedgerPlan {
  const net = new Map<string, bigint>(touch.map((a) => [a, 0n]));
  const debited = new Set<string>();
  const rows: LedgerPlan['rows'] = { tid: [], acc: [], amt: [], kind: [], ref: [], memo: [] };
  const push = (tid: string, acc: string, amt: bigint, t: Transfer) => {
    rows.tid.push(tid);
    rows.acc.push(acc);
    rows.amt.push(amt.toString());
    rows.kind.push(t.kind);
    rows.ref.push(t.ref ?? null);
    rows.memo.push(t.memo ?? null);
    net.set(acc, (net.get(acc) ?? 0n) + amt);
  };
  for (const t of transfers) {
    const byAccount = new Map<string, bigint>();
    for (const c of t.credits) {
      if (c.amount < 0n) throw new RangeError(`ledger credits must be positive, got ${c.amount}`);
      if (c.amount === 0n) continue;
      if (c.to === t.from) throw new RangeError('ledger movement needs two accounts');
      byAccount.set(c.to, (byAccount.get(c.to) ?? 0n) + c.amount);
    }
    if (!byAccount.size) continue;
    const total = [...byAccount.values()].reduce((s, a) => s + a, 0n);
    const tid = randomUUID();
    push(tid, t.from, -total, t);
    for (const [acc, amount] of byAccount) push(tid, acc, amount, t);
    debited.add(t.from);
  }
  const accounts = [...net.keys()].sort();
  return { accounts, nets: accounts.map((a) => net.get(a)!), debited: [...debited], rows };
}

/** A ledger write as CTEs of a larger statement (see `ledgerFragment`). */
export interface LedgerFragment {
  /** CTEs, comma-separated and without WITH: put them first in the statement's WITH list. */
  ctes: string;
  /** SQL boolean: the write applied (every account exists, none went short). Gate the statement's other writes on it. */
  ok: string;
  /** SQL select-list items `ledgerOutcome` reads: add them to the statement's final SELECT. */
  outcome: string;
  /** SQL for an account's balance after the write (null when refused); the account must be one the transfers touch. */
  balanceAfter(account: string): string;
  /** Parameter values, numbered from the `firstParam` given. */
  params: unknown[];
  plan: LedgerPlan;
}

/**
 * Build the ledger write as CTEs (`ledger_lock`, `ledger_ok`, `ledger_upd`, `ledger_rows`) with
 * parameters numbered from `firstParam`, for a caller that composes them into its own single
 * statement (the trade). `writeLedger` runs the same fragment on its own. `touch` names accounts
 * that must exist and are locked and reported even if the transfers leave them unchanged.
 */
export function ledgerFragment(transfers: readonly Transfer[], firstParam: number, opts: { touch?: readonly string[] } = {}): LedgerFragment {
  const plan = planOf(transfers, opts.touch);
  const p = (i: number) => `$${firstParam + i}`;
  const [acc, net, tid, racc, ramt, kind, ref, memo] = [0, 1, 2, 3, 4, 5, 6, 7].map(p);
  // The accounts are locked (in id order) with their net change before anything is decided; the
  // decision reads the locked, latest balances, so under concurrency it never acts on a stale one.
  const ctes = `ledger_lock AS MATERIALIZED (
       SELECT a.id, a.kind, a.balance, n.amt FROM accounts a JOIN unnest(${acc}::text[], ${net}::bigint[]) AS n(acc, amt) ON a.id = n.acc
        ORDER BY a.id FOR UPDATE OF a),
     ledger_ok AS (
       SELECT count(*) = cardinality(${acc}::text[]) AND coalesce(bool_and(kind NOT IN ('participant','pool') OR balance + amt >= 0), true) AS ok,
              json_object_agg(id, balance::text) AS before
         FROM ledger_lock),
     ledger_upd AS (
       UPDATE accounts a SET balance = a.balance + l.amt FROM ledger_lock l
        WHERE a.id = l.id AND (SELECT ok FROM ledger_ok)
        RETURNING a.id, a.balance),
     ledger_rows AS (
       INSERT INTO ledger_entries (transfer_id, account_id, amount, kind, ref, memo)
       SELECT * FROM unnest(${tid}::uuid[], ${racc}::text[], ${ramt}::bigint[], ${kind}::text[], ${ref}::text[], ${memo}::text[])
        WHERE (SELECT ok FROM ledger_ok))`;
  return {
    ctes,
    ok: '(SELECT ok FROM ledger_ok)',
    outcome: `(SELECT json_build_object('ok', ok, 'before', before) FROM ledger_ok) AS ledger`,
    balanceAfter(account: string) {
      const i = plan.accounts.indexOf(account);
      if (i < 0) throw new RangeError(`ledger fragment does not touch ${account}`);
      return `(SELECT balance FROM ledger_upd WHERE id = (${acc}::text[])[${i + 1}])`;
    },
    params: [plan.accounts, plan.nets.map(String), plan.rows.tid, plan.rows.acc, plan.rows.amt, plan.rows.kind, plan.rows.ref, plan.rows.memo],
    plan,
  };
}

/**
 * Read a fragment's outcome from the statement's result row: each touched account's balance after
 * the write (the locked balance plus its net change), or the refusal (insufficient_balance per
 * `shortfall`; a missing account is a bug and aborts).
 */
/** The ledger write's answer: whether it applied, and each touched account's balance before it (int8 as text, in JSON). */
export interface LedgerOutcomeRow {
  ledger: { ok: boolean; before: Record<string, string> | null };
}

export function ledgerOutcome(f: LedgerFragment, row: LedgerOutcomeRow, shortfall: ShortfallPolicy = 'refuse'): Map<string, bigint> {
  const before = row.ledger.before ?? {};
  if (row.ledger.ok) return new Map(f.plan.accounts.map((a, i) => [a, BigInt(before[a]) + f.plan.nets[i]]));
  throw refusal(f.plan, (a) => (before[a] === undefined ? undefined : BigInt(before[a])), shortfall);
}

/** Why a plan was refused on these balances: a missing account (a bug), else the first short account, per `shortfall`. */
function refusal(plan: LedgerPlan, before: (account: string) => bigint | undefined, shortfall: ShortfallPolicy): Error {
  const missing = plan.accounts.filter((a) => before(a) === undefined);
  if (missing.length) return new Error(`ledger account${missing.length > 1 ? 's' : ''} ${missing.join(', ')} do${missing.length > 1 ? '' : 'es'} not exist`);
  const netOf = (a: string) => plan.nets[plan.accounts.indexOf(a)];
  const isShort = (a: string) => before(a)! + netOf(a) < 0n;
  const short = plan.debited.find(isShort) ?? plan.accounts.find(isShort);
  if (!short) return new Error('ledger write refused with no account short or missing');
  if (shortfall === 'internal') return new Error(`ledger: ${short} holds ${before(short)} but the write needs ${-netOf(short)}`);
  return insufficientBalance(before(short)!, -netOf(short));
}

/** A locked account as the draft reads it. */
export interface LockedAccount {
  id: string;
  kind: string;
  balance: bigint;
}

/**
 * Ledger writes decided in memory, written in one statement (issue 29: a trade batch's legs). The
 * caller has locked every account it names (their balances are the latest and cannot move under
 * it); `apply` takes the same decision the statement would (all or nothing, no participant or pool
 * account short, the same refusal) on the running balances, and `fragment` writes every accepted
 * transfer at once, with the statement's own check still in place ('internal': a shortfall there is a bug).
 */
export class LedgerDraft {
  private readonly balances: Map<string, LockedAccount>;
  private readonly accepted: Transfer[] = [];
  /** Each balance change with the balance it replaced, so a rollback costs what it undoes (not a copy of every balance per trade). */
  private readonly undo: Array<[LockedAccount, bigint]> = [];
  constructor(accounts: Iterable<LockedAccount>) {
    this.balances = new Map([...accounts].map((a) => [a.id, { ...a }]));
  }

  balance(account: string): bigint {
    const a = this.balances.get(account);
    if (!a) throw new Error(`ledger account ${account} is not locked by this draft`);
    return a.balance;
  }

  /** Apply transfers (all or none) as `writeLedger` would; returns each touched account's balance after. */
  apply(transfers: readonly Transfer[], opts: LedgerWriteOptions & { touch?: readonly string[] } = {}): Map<string, bigint> {
    const plan = planOf(transfers, opts.touch);
    const before = (a: string) => this.balances.get(a)?.balance;
    const short = (a: string, i: number) => {
      const acc = this.balances.get(a);
      return !acc || ((acc.kind === 'participant' || acc.kind === 'pool') && acc.balance + plan.nets[i] < 0n);
    };
    if (plan.accounts.some(short)) throw refusal(plan, before, opts.shortfall ?? 'refuse');
    plan.accounts.forEach((a, i) => {
      const acc = this.balances.get(a)!;
      this.undo.push([acc, acc.balance]);
      acc.balance += plan.nets[i];
    });
    this.accepted.push(...transfers);
    return new Map(plan.accounts.map((a) => [a, this.balances.get(a)!.balance]));
  }

  /** A point to come back to (`rollback`): a trade whose fills went in but whose own legs were refused. */
  mark(): { transfers: number; changes: number } {
    return { transfers: this.accepted.length, changes: this.undo.length };
  }

  rollback(to: { transfers: number; changes: number }): void {
    this.accepted.length = to.transfers;
    while (this.undo.length > to.changes) {
      const [acc, balance] = this.undo.pop()!;
      acc.balance = balance;
    }
  }

  /** Every accepted transfer as one fragment (see `ledgerFragment`); read it back with `ledgerOutcome(f, row, 'internal')`. */
  fragment(firstParam: number): LedgerFragment {
    return ledgerFragment(this.accepted, firstParam);
  }
}

/**
 * Apply a batch of transfers in one statement (nothing when there is none). Returns every touched
 * account's balance after the write; a refusal changes nothing.
 */
export async function writeLedger(m: EntityManager, transfers: readonly Transfer[], opts: LedgerWriteOptions = {}): Promise<Map<string, bigint>> {
  const f = ledgerFragment(transfers, 1, { touch: opts.touch });
  if (!f.plan.accounts.length) return new Map();
  const [row] = await rows<LedgerOutcomeRow>(m, `WITH ${f.ctes} SELECT ${f.outcome}`, f.params);
  return ledgerOutcome(f, row, opts.shortfall);
}

/** One debit to one credit (a positive amount): mints, credits, grants, a deleted participant's balance. */
export async function transfer(
  m: EntityManager,
  t: { from: string; to: string; amount: bigint; kind: string; ref?: string | null; memo?: string | null },
  opts: LedgerWriteOptions = {},
): Promise<{ fromBalance: bigint; toBalance: bigint }> {
  if (t.amount <= 0n) throw new RangeError(`ledger movement must be positive, got ${t.amount}`);
  const after = await writeLedger(m, [leg(t.from, t.to, t.amount, t.kind, t.ref, t.memo)], opts);
  return { fromBalance: after.get(t.from)!, toBalance: after.get(t.to)! };
}

/**
 * Run `fn`, which adds ledger legs to the array it is given, then write them all in ONE statement
 * (none when there is none): the transaction's accounts are locked once, sorted by id, after every
 * book lock `fn` took. That is the order a lane batch keeps (books, then accounts, each in id order),
 * so a transaction ending several books (a decision, a metric's or workspace's books voided, stale
 * books retired) cannot deadlock with one: written book by book, it held some accounts while waiting
 * on others (issue 29). `fn` must not write the ledger itself; what it reads of a balance is what
 * the transaction found (its own legs are not applied yet). `touch()`: accounts a later statement
 * of the transaction writes, locked here with the rest.
 */
export async function withOneLedgerWrite<T>(
  m: EntityManager,
  fn: (legs: Transfer[]) => Promise<T>,
  opts: { shortfall?: ShortfallPolicy; touch?: (result: T) => readonly string[] } = {},
): Promise<T> {
  const legs: Transfer[] = [];
  const result = await fn(legs);
  await writeLedger(m, legs, { shortfall: opts.shortfall, touch: opts.touch?.(result) });
  return result;
}

/**
 * Lock these accounts (and those `also` selects: SQL with an `id` column, its parameters from $2)
 * in one statement, sorted by id, and return them with their balances: for a transaction that
 * writes after several reads (a lane batch prices its trades on these balances), taken after its
 * book locks and before its first write, so no later statement waits on another transaction while
 * holding an account. A transaction that writes the ledger once gets the same from the writer
 * itself (`withOneLedgerWrite`).
 */
export async function lockAccounts(m: EntityManager, ids: readonly string[], also?: { sql: string; params: unknown[] }): Promise<Array<{ id: string; kind: string; balance: bigint }>> {
  const rows = await queryPrepared<{ id: string; kind: string; balance: string }>(m, `WITH ${lockAccountsCte('$1', also?.sql)} SELECT * FROM locked_accounts`, [
    ids,
    ...(also?.params ?? []),
  ]);
  return lockedAccounts(rows);
}

/**
 * lockAccounts as a CTE (`locked_accounts`: id, kind, balance as text), for a statement that also
 * reads what the locks protect (a lane batch's one read): every lock in it is an account lock, taken
 * in id order, so it keeps the global order (books first, in the statement before).
 */
export function lockAccountsCte(idsParam: string, also?: string): string {
  return `ids AS (SELECT unnest(${idsParam}::text[]) AS id${also ? ` UNION ${also}` : ''}),
     locked_accounts AS MATERIALIZED (SELECT a.id, a.kind, a.balance::text AS balance FROM accounts a JOIN ids ON ids.id = a.id ORDER BY a.id FOR UPDATE OF a)`;
}

/** The rows of `locked_accounts`, balances as bigint. */
export function lockedAccounts(rows: ReadonlyArray<{ id: string; kind: string; balance: string }>): Array<{ id: string; kind: string; balance: bigint }> {
  return rows.map((a) => ({ id: a.id, kind: a.kind, balance: BigInt(a.balance) }));
}

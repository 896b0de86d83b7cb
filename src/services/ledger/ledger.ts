import type { DataSource, EntityManager } from 'typeorm';
import type { AccountKind } from '../../entities/ledger';
import { rows } from '../../db/queryRows';

export const accountId = {
  agent: (id: string) => `agent:${id}`,
  pool: (marketId: string) => `pool:${marketId}`,
  issuance: 'issuance',
  treasury: 'treasury',
} as const;

export async function openAccount(m: EntityManager, id: string, kind: AccountKind): Promise<void> {
  await openAccounts(m, [id], kind);
}

/** Open accounts (balance 0) in one statement; an account that exists already is left as it is. */
export async function openAccounts(m: EntityManager, ids: readonly string[], kind: AccountKind): Promise<void> {
  if (!ids.length) return;
  await m.query(`INSERT INTO accounts (id, kind) SELECT x, $2 FROM unnest($1::text[]) x ON CONFLICT (id) DO NOTHING`, [ids, kind]);
}

/** Remove a participant's account when it holds nothing (the participant row goes with it). */
export async function dropEmptyAgentAccount(m: EntityManager, agentId: string): Promise<void> {
  await m.query(`DELETE FROM accounts WHERE id = 'agent:' || $1 AND balance = 0`, [agentId]);
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
    const [t] = await rows<{ total: string }>(m, `SELECT coalesce(sum(balance), 0)::text AS total FROM accounts`);
    const mism: Array<{ id: string }> = await m.query(
      `SELECT a.id FROM accounts a
         LEFT JOIN (SELECT account_id, sum(amount) AS s FROM ledger_entries GROUP BY account_id) e ON e.account_id = a.id
        WHERE a.balance <> coalesce(e.s, 0)`,
    );
    const [u] = await rows<{ n: number }>(m, `SELECT count(*)::int AS n FROM (SELECT 1 FROM ledger_entries GROUP BY transfer_id HAVING sum(amount) <> 0) x`);
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

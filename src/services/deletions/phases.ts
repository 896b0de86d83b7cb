import type { EntityManager } from 'typeorm';
import { changedRows, firstRow, rows } from '../../db/queryRows';
import { logger } from '../../logger';
import { closeOrders, lockMarketsById, type MarketRow } from '../books';
import { accountId, balanceOf, transfer, withOneLedgerWrite } from '../ledger';
import { voidLockedMarket } from '../lifecycle';
import { deleteAgentRow } from '../identity';
import { deleteWorkspaceRow } from '../workspaces';

/**
 * The phases of a large deletion. Each `step` does one bounded batch inside the runner's
 * transaction and returns how many rows (or books) it handled; 0 means the phase is finished.
 * Every step works from what is still there, so a batch that ran twice (a job killed after its
 * commit and retried) finds nothing to redo: no refund is paid twice, no row is counted twice.
 */
export interface Limits {
  /** Books voided (and refunded) per batch. */
  books: number;
  /** Rows deleted per batch. */
  rows: number;
}

export const DEFAULT_LIMITS: Limits = { books: 50, rows: 5000 };

export interface Phase {
  name: string;
  count(m: EntityManager, target: string): Promise<number>;
  step(m: EntityManager, target: string, now: Date, limits: Limits): Promise<number>;
}

/** A count query's `n` (cast ::int, so pg answers a number). */
const n = async (m: EntityManager, sql: string, params: unknown[]): Promise<number> => (await rows<{ n: number }>(m, sql, params))[0].n;

/** Delete up to `limit` rows of `table` matching `where` (by ctid: any table, one index scan). */
async function chunk(m: EntityManager, table: string, where: string, params: unknown[], limit: number): Promise<number> {
  return changedRows(
    m,
    `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT ${Math.max(1, Math.floor(limit))}))`,
    params,
  );
}

/** A phase deleting rows of several tables, in order, `rows` per batch. */
function rowsPhase(name: string, tables: Array<{ table: string; where: string }>): Phase {
  return {
    name,
    count: async (m, target) => {
      let total = 0;
      for (const t of tables) total += await n(m, `SELECT count(*)::int AS n FROM ${t.table} WHERE ${t.where}`, [target]);
      return total;
    },
    step: async (m, target, _now, limits) => {
      let left = limits.rows;
      for (const t of tables) {
        if (left <= 0) break;
        left -= await chunk(m, t.table, t.where, [target], left);
      }
      return limits.rows - left;
    },
  };
}

const LIVE = `status IN ('open','closed')`;
const OF_WORKSPACE_MARKETS = `market_id IN (SELECT id FROM markets WHERE workspace_id = $1)`;

/**
 * Void locked live books in one ledger write (hot accounts locked once, in id order): holders get
 * their net cost back, the pool's remainder goes to its funders, exactly as the book's void does.
 */
async function voidBooks(m: EntityManager, books: MarketRow[], now: Date): Promise<number> {
  return withOneLedgerWrite(
    m,
    async (legs) => {
      for (const mk of books) await voidLockedMarket(m, mk, 'workspace deleted', now, legs);
      return books.length;
    },
    { shortfall: 'internal' },
  );
}

async function lockLiveBooks(m: EntityManager, workspaceId: string, limit: number): Promise<MarketRow[]> {
  const ids = (await rows<{ id: string }>(m, `SELECT id FROM markets WHERE workspace_id = $1 AND ${LIVE} ORDER BY id LIMIT ${limit}`, [workspaceId])).map((r) => r.id);
  if (!ids.length) return [];
  // Locked in id order, like every batch that locks books; a book ended meanwhile is skipped by the void.
  return lockMarketsById(m, ids);
}

/** DELETE /workspaces/{id}: books voided and refunded first, then the rows, largest tables in chunks, the workspace row last. */
export const WORKSPACE_PHASES: Phase[] = [
  {
    name: 'books',
    count: (m, ws) => n(m, `SELECT count(*)::int AS n FROM markets WHERE workspace_id = $1 AND ${LIVE}`, [ws]),
    step: async (m, ws, now, limits) => voidBooks(m, await lockLiveBooks(m, ws, limits.books), now),
  },
  rowsPhase('trades', [{ table: 'trades', where: OF_WORKSPACE_MARKETS }]),
  rowsPhase('positions', [
    { table: 'positions', where: OF_WORKSPACE_MARKETS },
    { table: 'limit_orders', where: `${OF_WORKSPACE_MARKETS} AND status <> 'open'` },
    { table: 'market_funders', where: OF_WORKSPACE_MARKETS },
  ]),
  // A live book (one opened after the books phase) stays for the last phase, which voids it first.
  rowsPhase('markets', [{ table: 'markets', where: `workspace_id = $1 AND NOT ${LIVE}` }]),
  rowsPhase('proposals', [{ table: 'proposals', where: `workspace_id = $1 AND NOT EXISTS (SELECT 1 FROM markets mk WHERE mk.proposal_id = proposals.id)` }]),
  rowsPhase('history', [
    { table: 'metric_readings', where: 'workspace_id = $1' },
    { table: 'metric_updates', where: 'workspace_id = $1' },
    { table: 'metric_revisions', where: 'workspace_id = $1' },
    { table: 'hook_deliveries', where: 'hook_id IN (SELECT id FROM hooks WHERE workspace_id = $1)' },
    { table: 'decision_traces', where: 'workspace_id = $1' },
    { table: 'agent_heartbeats', where: 'workspace_id = $1' },
    { table: 'data_room_actions', where: 'workspace_id = $1' },
  ]),
  {
    name: 'workspace',
    count: async () => 1,
    step: async (m, ws, now, limits) => {
      const row = await firstRow<{ id: string }>(m, `SELECT id FROM workspaces WHERE id = $1 FOR UPDATE`, [ws]);
      if (!row) return 0;
      // Books opened after the books phase (a horizon pass already under way): voided here first.
      const late = await lockLiveBooks(m, ws, limits.books);
      if (late.length) {
        logger.warn({ workspaceId: ws, books: late.length }, 'deletion: books opened during the deletion voided');
        await voidBooks(m, late, now);
        if (late.length === limits.books) return late.length; // more may wait: the next batch
      }
      await deleteWorkspaceRow(m, ws);
      return 1;
    },
  },
];

/**
 * DELETE /agents/{id}: the request's transaction already closed its orders, moved its balance and
 * revoked its keys; here its trades and positions go in chunks, then the participant row, with any
 * credits that reached it meanwhile (a payout of a book it held) moved to the same heir.
 */
export const PARTICIPANT_PHASES: Phase[] = [
  rowsPhase('trades', [{ table: 'trades', where: 'agent_id = $1' }]),
  rowsPhase('positions', [{ table: 'positions', where: 'agent_id = $1' }]),
  rowsPhase('history', [
    { table: 'limit_orders', where: `agent_id = $1 AND status <> 'open'` },
    { table: 'decision_traces', where: 'agent_id = $1' },
    { table: 'agent_heartbeats', where: 'agent_id = $1' },
  ]),
  {
    name: 'participant',
    count: async () => 1,
    step: async (m, id, now) => {
      const row = await firstRow<{ id: string }>(m, `SELECT id FROM agents WHERE id = $1 FOR UPDATE`, [id]);
      if (!row) return 0;
      await settleParticipantCredits(m, id, now);
      await deleteAgentRow(m, id);
      return 1;
    },
  },
];

/** Where a deleted participant's credits go: its parent, else its creator, else the treasury. */
export async function heirOf(m: EntityManager, id: string): Promise<{ account: string; agentId: string | null }> {
  const a = await firstRow<{ parent_id: string | null; created_by: string | null }>(m, `SELECT parent_id, created_by FROM agents WHERE id = $1`, [id]);
  const heirId = [a?.parent_id, a?.created_by].find((x) => x && x !== id) ?? null;
  const exists = heirId ? (await rows(m, `SELECT 1 FROM agents WHERE id = $1`, [heirId])).length > 0 : false;
  return exists ? { account: accountId.agent(heirId!), agentId: heirId } : { account: accountId.treasury, agentId: null };
}

/**
 * In the caller's transaction, the participant row locked: its open limit orders cancelled (reserves
 * back to it), then its whole balance to its heir. What it moved, and to whom.
 */
export async function settleParticipantCredits(m: EntityManager, id: string, now: Date): Promise<{ amount: bigint; to: { account: string; agentId: string | null } }> {
  const open = (await rows<{ id: string }>(m, `SELECT id FROM limit_orders WHERE agent_id = $1 AND status = 'open' ORDER BY id`, [id])).map((r) => r.id);
  if (open.length) await closeOrders(m, open, 'cancelled', 'participant deleted', now);
  const to = await heirOf(m, id);
  const balance = (await balanceOf(m, accountId.agent(id), true)) ?? 0n;
  if (balance > 0n) await transfer(m, { from: accountId.agent(id), to: to.account, amount: balance, kind: 'participant_deleted', ref: id, memo: `balance of deleted participant ${id}` });
  return { amount: balance, to };
}

import type { EntityManager } from 'typeorm';
import { rows } from '../../db/queryRows';
import { DomainError } from '../../errors';
import { holderPayout, payoutFraction } from '../../domain/lmsr';
import { splitProRata } from '../../domain/funding';

import { accountId, balanceOf, leg, withOneLedgerWrite, writeLedger, type Transfer } from '../ledger';
import { fundersOf, lockMarket, marketConsensus, type MarketRow } from '../books';
import { emitEvent } from '../events';
import { callback } from '../wiring';
import { closeOrdersOf, markResolved, markVoided } from '../books';
import { recordPayouts } from '../trading';
import { recordBookVoided } from '../trackRecord';

interface HolderRow {
  agent_id: string;
  shares_higher: string;
  shares_lower: string;
  net_cost: string;
}

async function holders(m: EntityManager, marketId: string): Promise<HolderRow[]> {
  return rows<HolderRow>(m, `SELECT agent_id, shares_higher, shares_lower, net_cost FROM positions WHERE market_id = $1 ORDER BY agent_id`, [marketId]);
}

/**
 * Holders' payouts from the pool, then whatever the pool still holds (dust included) back to the
 * funders, pro rata of what each put in (domain/funding: shares rounded down, the dust to the first funder).
 */
async function payOut(
  m: EntityManager,
  mk: MarketRow,
  pays: Array<{ agent: string; amount: bigint }>,
  kind: 'payout' | 'refund',
  ledger: Transfer[],
  poolBalance?: bigint,
): Promise<bigint> {
  const pool = poolBalance ?? (await balanceOf(m, accountId.pool(mk.id))) ?? 0n;
  const total = pays.reduce((s, p) => s + p.amount, 0n);
  if (total > pool) throw new Error(`pool ${mk.id} holds ${pool} but owes ${total}`);
  for (const p of pays) ledger.push(leg(accountId.pool(mk.id), accountId.agent(p.agent), p.amount, kind, mk.id));
  for (const share of splitProRata(pool - total, await fundersOf(m, mk))) {
    ledger.push(leg(accountId.pool(mk.id), share.key ? accountId.agent(share.key) : accountId.treasury, share.amount, 'pool_return', mk.id));
  }
  return total;
}

/**
 * Resolve a locked, open book at value V: each holder paid with one rounding down
 * (higher shares pay v, lower pay 1-v), the pool's remainder back to the funders pro rata.
 */
export async function resolveLockedMarket(
  m: EntityManager,
  mk: MarketRow,
  value: number,
  now: Date,
  opts: { settledEarly?: boolean; reason?: string } = {},
  batch?: Transfer[],
): Promise<{ totalPayout: bigint }> {
  if (mk.status !== 'open' && mk.status !== 'closed') throw new DomainError('conflict', `Market ${mk.id} is already ${mk.status}.`);
  if (!Number.isFinite(value) || value < 0) throw new DomainError('validation_failed', `A resolution value must be a finite number >= 0, got ${value}.`);
  const v = payoutFraction(value, mk.rangeMin, mk.rangeMax);
  const pays = (await holders(m, mk.id)).map((h) => ({ agent: h.agent_id, amount: holderPayout(BigInt(h.shares_higher), BigInt(h.shares_lower), v) }));
  const ledger = batch ?? [];
  await closeOrdersOf(m, [mk.id], 'cancelled', 'market resolved', now, ledger);
  const total = await payOut(m, mk, pays, 'payout', ledger);
  await recordPayouts(m, mk.id, pays, now);
  await callback('bookResolved')(m, mk, value, marketConsensus(mk), now);
  // The standings' mark rides on the status UPDATE (the standings job adds the book after commit).
  const mark = callback('bookResolvedForStats')(mk, now, 6);
  await markResolved(m, mk.id, Math.min(value, mk.rangeMax), now, { settledEarly: opts.settledEarly ?? false, reason: opts.settledEarly ? (opts.reason ?? null) : null }, mark);
  await emitEvent(m, mk.workspaceId, 'market:resolved', {
    marketId: mk.id,
    metricName: mk.metricName,
    targetDate: mk.targetDate,
    actualValue: value,
    ...(opts.settledEarly ? { settledEarly: true, reason: opts.reason ?? null } : {}),
  });
  if (!batch) await writeLedger(m, ledger, { shortfall: 'internal' });
  return { totalPayout: total };
}

/**
 * Void a locked book: every position's net cost back (pro rata if the pool cannot cover them all,
 * which only happens after large round trips), then the pool's remainder to the funders pro rata.
 */
export async function voidLockedMarket(m: EntityManager, mk: MarketRow, reason: string, now: Date, batch?: Transfer[]): Promise<{ refunded: bigint }> {
  if (mk.status !== 'open' && mk.status !== 'closed') return { refunded: 0n };
  const rows = await holders(m, mk.id);
  const owed = rows.map((h) => ({ agent: h.agent_id, net: BigInt(h.net_cost) > 0n ? BigInt(h.net_cost) : 0n }));
  const totalOwed = owed.reduce((s, o) => s + o.net, 0n);
  const pool = (await balanceOf(m, accountId.pool(mk.id))) ?? 0n;
  const pays = owed.map((o) => ({ agent: o.agent, amount: totalOwed <= pool ? o.net : (o.net * pool) / totalOwed }));
  const ledger = batch ?? [];
  await closeOrdersOf(m, [mk.id], 'cancelled', 'market voided', now, ledger);
  const refunded = await payOut(m, mk, pays, 'refund', ledger, pool);
  await recordPayouts(m, mk.id, pays, now);
  await markVoided(m, mk.id, reason, now);
  await recordBookVoided(m, mk, now);
  await emitEvent(m, mk.workspaceId, 'market:closed', { marketId: mk.id, voided: true, reason });
  if (!batch) await writeLedger(m, ledger, { shortfall: 'internal' });
  return { refunded };
}

/**
 * Void these books (a no-op for one already resolved, voided or gone): each locked in id order, and
 * all their refunds in one ledger statement, last. Returns how many were voided.
 */
export async function voidBooksById(m: EntityManager, marketIds: readonly string[], reason: string, now: Date): Promise<number> {
  return withOneLedgerWrite(
    m,
    async (legs) => {
      let voided = 0;
      for (const id of [...marketIds].sort()) {
        const mk = await lockMarket(m, id);
        if (mk && (mk.status === 'open' || mk.status === 'closed')) {
          await voidLockedMarket(m, mk, reason, now, legs);
          voided++;
        }
      }
      return voided;
    },
    { shortfall: 'internal' },
  );
}


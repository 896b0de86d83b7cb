import { randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { makeDataSource } from '../../src/db/dataSource';
import { DomainError } from '../../src/errors';
import { toNano } from '../../src/domain/money';
import { accountId, checkLedgerInvariant, leg, ledgerFragment, ledgerOutcome, openAccounts, transfer, writeLedger, type Transfer } from '../../src/services/ledger';
import { EVENT_TYPES, outboxFragment, writeEvents } from '../../src/services/events';
import { whileHolding } from '../helpers/lockWaits';
import { waitFor } from '../helpers/services';

let ds: DataSource;
beforeAll(async () => {
  ds = makeDataSource(process.env.DATABASE_URL!, 4);
  await ds.initialize();
});
afterAll(async () => {
  // Every scenario leaves the shared ledger sound.
  const report = await checkLedgerInvariant(ds);
  expect({ ...report, total: report.total.toString() }).toEqual({ ok: true, total: '0', mismatchedAccounts: [], unbalancedTransfers: 0, negativeParticipants: [] });
  await ds.destroy();
});

/** Fresh participant accounts, each minted `credits` from issuance. */
async function accounts(names: string[], credits: number): Promise<string[]> {
  const tag = randomBytes(4).toString('hex');
  const ids = names.map((n) => `agent:ledger-${tag}-${n}`);
  await ds.transaction(async (m) => {
    await openAccounts(m, ids, 'participant');
    if (credits > 0) await writeLedger(m, ids.map((id) => leg(accountId.issuance, id, toNano(credits), 'mint', tag)));
  });
  return ids;
}

async function balances(ids: string[]): Promise<bigint[]> {
  const rows: Array<{ id: string; balance: string }> = await ds.query(`SELECT id, balance FROM accounts WHERE id = ANY($1::text[])`, [ids]);
  const by = new Map(rows.map((r) => [r.id, BigInt(r.balance)]));
  return ids.map((id) => by.get(id)!);
}

async function entriesOf(ids: string[]): Promise<number> {
  const [r] = await ds.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = ANY($1::text[])`, [ids]);
  return r.n;
}

/** Count the statements a piece of work sends. */
function counted(m: EntityManager): { n: () => number } {
  const spy = jest.spyOn(m, 'query');
  return { n: () => spy.mock.calls.length };
}

describe('the ledger writer', () => {
  it('applies a batch of many legs over the same accounts in one statement, each leg its own balanced transfer', async () => {
    const [a, b, c] = await accounts(['a', 'b', 'c'], 100);
    const batch: Transfer[] = [];
    const expected = new Map([a, b, c].map((x) => [x, toNano(100)]));
    const ring = [a, b, c];
    for (let i = 0; i < 300; i++) {
      const from = ring[i % 3];
      const to = ring[(i + 1 + (i % 2)) % 3];
      const amount = BigInt(1 + ((i * 7919) % 1000)) * 1_000_000n;
      batch.push(leg(from, to, amount, 'test_leg', `leg-${i}`));
      expected.set(from, expected.get(from)! - amount);
      expected.set(to, expected.get(to)! + amount);
    }
    // One debit to many credits (repeating a target), and a zero leg that writes nothing.
    batch.push({ from: a, credits: [{ to: b, amount: 5n }, { to: c, amount: 7n }, { to: b, amount: 11n }], kind: 'test_split' });
    batch.push(leg(b, c, 0n, 'test_zero'));
    expected.set(a, expected.get(a)! - 23n);
    expected.set(b, expected.get(b)! + 16n);
    expected.set(c, expected.get(c)! + 7n);

    const after = await ds.transaction(async (m) => {
      const statements = counted(m);
      const out = await writeLedger(m, batch);
      expect(statements.n()).toBe(1);
      return out;
    });
    expect(await balances([a, b, c])).toEqual([a, b, c].map((x) => expected.get(x)));
    expect([a, b, c].map((x) => after.get(x))).toEqual([a, b, c].map((x) => expected.get(x)));
    // 300 legs of two rows, the split as one transfer of one debit and two credits (b merged), no zero leg.
    expect(await entriesOf([a, b, c])).toBe(3 + 300 * 2 + 3);
    const transfers = await ds.query(
      `SELECT transfer_id, sum(amount)::text AS s, count(*)::int AS n, min(kind) AS kind FROM ledger_entries WHERE account_id = ANY($1::text[]) AND kind LIKE 'test_%' GROUP BY transfer_id`,
      [[a, b, c]],
    );
    expect(transfers).toHaveLength(301);
    expect(transfers.every((t: { s: string }) => t.s === '0')).toBe(true);
    expect(transfers.find((t: { kind: string }) => t.kind === 'test_split').n).toBe(3);
    expect(transfers.some((t: { kind: string }) => t.kind === 'test_zero')).toBe(false);
  });

  it('refuses an overdraft on the net change and writes nothing; the transaction goes on', async () => {
    const [a, b, c] = await accounts(['a', 'b', 'c'], 10);
    const rowsBefore = await entriesOf([a, b, c]);
    // Each leg alone is covered; together a pays 11 out of 10 (its 2 from c does not arrive first: the check is on the net).
    const batch = [leg(a, b, toNano(4), 'test_short'), leg(c, a, toNano(2), 'test_short'), leg(a, c, toNano(4), 'test_short'), leg(a, b, toNano(5), 'test_short')];
    await ds.transaction(async (m) => {
      const statements = counted(m);
      const refusal = await writeLedger(m, batch).catch((e) => e);
      expect(statements.n()).toBe(1);
      expect(refusal).toBeInstanceOf(DomainError);
      expect(refusal).toMatchObject({ code: 'insufficient_balance', details: { balance: 10_000_000_000n, cost: 11_000_000_000n } });
      expect((refusal as DomainError).toBody()).toMatchObject({ code: 'insufficient_balance', balance: 10, cost: 11 });
      expect(refusal.message).toBe('Not enough credits: the balance is 10 and this needs 11.');
      // Still inside the same transaction, which is not aborted: nothing moved, nothing was written.
      const inside = await m.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = ANY($1::text[])`, [[a, b, c]]);
      expect(inside[0].n).toBe(rowsBefore);
      const held = await m.query(`SELECT balance FROM accounts WHERE id = ANY($1::text[]) ORDER BY id`, [[a, b, c]]);
      expect(held.map((r: { balance: string }) => BigInt(r.balance))).toEqual([toNano(10), toNano(10), toNano(10)]);
      // A transfer refuses the same way (its route answers 409); a write the caller proved covered aborts as a bug.
      await expect(transfer(m, { from: a, to: b, amount: toNano(10) + 1n, kind: 'test_short' })).rejects.toMatchObject({
        code: 'insufficient_balance',
        details: { balance: 10_000_000_000n, cost: 10_000_000_001n },
      });
      const bug = await writeLedger(m, batch, { shortfall: 'internal' }).catch((e) => e);
      expect(bug).not.toBeInstanceOf(DomainError);
      expect(bug.message).toMatch(/holds .* but the write needs/);
      // A missing account is a bug too, and writes nothing either.
      await expect(writeLedger(m, [leg(a, `${a}-missing`, 1n, 'test_short')])).rejects.toThrow(/does not exist/);
      // The covered part alone still goes through in the same transaction.
      await writeLedger(m, batch.slice(0, 3));
    });
    expect(await balances([a, b, c])).toEqual([toNano(4), toNano(14), toNano(12)]);
    expect(await entriesOf([a, b, c])).toBe(rowsBefore + 6);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE account_id LIKE $1`, [`${a}-missing`]);
    expect(n).toBe(0);
  });

  it('refuses bad legs before touching the database', async () => {
    const [a, b] = await accounts(['a', 'b'], 1);
    await ds.transaction(async (m) => {
      const statements = counted(m);
      await expect(writeLedger(m, [leg(a, b, -1n, 'test_bad')])).rejects.toThrow(RangeError);
      await expect(writeLedger(m, [leg(a, a, 1n, 'test_bad')])).rejects.toThrow(RangeError);
      await expect(transfer(m, { from: a, to: b, amount: 0n, kind: 'test_bad' })).rejects.toThrow(RangeError);
      expect(await writeLedger(m, [])).toEqual(new Map());
      expect(statements.n()).toBe(0);
    });
  });

  it('locks the accounts of a batch once, in id order: batches naming them in opposite orders do not deadlock', async () => {
    const [a, mid, z] = await accounts(['a', 'm', 'z'], 50);
    // Hold the middle account so both batches queue up inside their statement.
    await whileHolding('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [mid], async (h) => {
      const pids: number[] = [];
      const run = (legs: Transfer[]) =>
        ds.transaction(async (m) => {
          pids.push((await m.query('SELECT pg_backend_pid() AS pid'))[0].pid);
          return writeLedger(m, legs);
        });
      const forward = run([leg(a, mid, 1n, 'test_order'), leg(mid, z, 1n, 'test_order')]);
      const backward = run([leg(z, mid, 2n, 'test_order'), leg(mid, a, 2n, 'test_order')]);
      await waitFor('both batches to wait for a lock', async () => {
        if (pids.length < 2) return false;
        const r = await ds.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND wait_event_type = 'Lock'`, [pids]);
        return r[0].n === 2;
      });
      await h.release();
      await Promise.all([forward, backward]);
    });
    expect(await balances([a, mid, z])).toEqual([toNano(50) + 1n, toNano(50), toNano(50) - 1n]);
  });

  it('composes into a larger statement: a refused ledger part leaves the gated parts unwritten', async () => {
    const [a, b] = await accounts(['a', 'b'], 3);
    const ws = (await ds.query(`SELECT gen_random_uuid() AS id`))[0].id;
    const attempt = (amount: bigint) =>
      ds.transaction(async (m) => {
        const ledger = ledgerFragment([leg(a, b, amount, 'test_compose')], 1);
        const events = outboxFragment([{ workspaceId: ws, type: 'trade:executed', data: { amount: amount.toString() } }], 1 + ledger.params.length, ledger.ok);
        const [row] = await m.query(`WITH ${ledger.ctes}, ${events.cte} SELECT ${ledger.balanceAfter(b)} AS b_after, ${ledger.outcome}`, [...ledger.params, ...events.params]);
        ledgerOutcome(ledger, row);
        return BigInt(row.b_after);
      });
    await expect(attempt(toNano(4))).rejects.toMatchObject({ code: 'insufficient_balance', details: { balance: 3_000_000_000n, cost: 4_000_000_000n } });
    expect(await attempt(toNano(2))).toBe(toNano(5));
    const events = await ds.query(`SELECT data FROM outbox WHERE workspace_id = $1`, [ws]);
    expect(events.map((e: { data: { amount: string } }) => e.data.amount)).toEqual([toNano(2).toString()]);
    expect(await balances([a, b])).toEqual([toNano(1), toNano(5)]);
  });
});

describe('the outbox writer', () => {
  it('writes many events in one statement, in the order given', async () => {
    const ws = (await ds.query(`SELECT gen_random_uuid() AS id`))[0].id;
    const events = Array.from({ length: 50 }, (_, i) => ({ workspaceId: ws, type: EVENT_TYPES[i % EVENT_TYPES.length], data: { i } }));
    // Rolled back, not committed and deleted: suites share the database, and a running app's pump
    // would number committed rows whose deletion then reads, in the relay's count, as a number lost.
    const qr = ds.createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    try {
      const statements = counted(qr.manager);
      await writeEvents(qr.manager, events);
      await writeEvents(qr.manager, []);
      expect(statements.n()).toBe(1);
      const rows = await qr.manager.query(`SELECT type, data FROM outbox WHERE workspace_id = $1 ORDER BY id`, [ws]);
      expect(rows).toEqual(events.map((e) => ({ type: e.type, data: e.data })));
    } finally {
      await qr.rollbackTransaction();
      await qr.release();
    }
  });
});

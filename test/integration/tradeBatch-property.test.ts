import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { toNano } from '../../src/domain/money';
import { applyPlaceOrder, applyTradeBatch, applyTradeJob, serializeSpec, type TradeJobData } from '../../src/services/trading';
import type { TradeSpec } from '../../src/domain/trading';
import type { TradeOutcome } from '../../src/domain/outcomes';
import { consensusOf, probability } from '../../src/domain/lmsr';
import { buildWorkspace, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trader } from '../helpers/markets';

/**
 * Issue 29 step 1: a set-based batch equals the same trades applied one by one. Two identical fresh
 * floors (three books, one of them closed, resting orders on two; two funded traders and a poor
 * one); a random batch mixing buys (with and without a price guard), targets, sells (some more than
 * held), buys against held shares (redemptions), trades on an unknown book and a repeated request
 * goes to the lane's batch path on one floor and, in the batch's own order (book by book, arrival
 * order within a book), one request at a time on the other. Outcomes, balances, positions, trade
 * rows, ledger legs, stored outcomes, order fills, book states and events must be the same.
 */
let app: TestApp;

useTestApp((a) => (app = a));
afterEach(async () => expectLedgerSound(app.deps));

type Dir = 'higher' | 'lower';
interface Op {
  who: number;
  /** 0-2: the floor's books (2 is closed); 3: a book that does not exist. */
  book: number;
  kind: 'buy' | 'target' | 'sell';
  direction: Dir;
  credits: number;
  guard: number | null;
  /** Repeat an earlier request (same id and body): a replay inside the batch. */
  repeat: number | null;
}

const op: fc.Arbitrary<Op> = fc.record({
  who: fc.integer({ min: 0, max: 2 }),
  book: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 1 }) }, { weight: 1, arbitrary: fc.constantFrom(2, 3) }),
  kind: fc.constantFrom<Op['kind']>('buy', 'buy', 'buy', 'buy', 'target', 'sell'),
  direction: fc.constantFrom<Dir>('higher', 'lower'),
  credits: fc.integer({ min: 1, max: 120 }),
  guard: fc.option(fc.integer({ min: 300, max: 700 }), { nil: null }),
  repeat: fc.oneof({ weight: 12, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() }),
});

interface Floor {
  ws: TestWorkspace;
  metric: string;
  books: string[];
  agents: TestAgent[];
  orders: string[];
  /** Ledger and outbox ids before the batch: only what it writes is compared. */
  ledgerFrom: number;
  outboxFrom: number;
}

/** The resting orders of a floor: [trader, book, side, limit, shares]. Trader 2 (the poor one) has one too. */
const RESTING: Array<[number, number, Dir, number, number]> = [
  [0, 0, 'higher', 490, 30],
  [1, 0, 'lower', 515, 25],
  [0, 1, 'lower', 508, 40],
  [2, 1, 'higher', 495, 3],
];

async function floor(): Promise<Floor> {
  const ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000, defaultLiquidityCredits: 200 });
  const metric = await createMetric(app, ws, { value: 500 });
  const books = (await marketsOf(app, ws, metric.id)).slice(0, 3).map((m: { id: string }) => m.id);
  const agents = [await trader(app, ws, 300), await trader(app, ws, 300), await trader(app, ws, 5)];
  const orders: string[] = [];
  for (const [who, book, direction, limit, shares] of RESTING) {
    const orderId = randomUUID();
    const out = await applyPlaceOrder(app.deps, { orderId, agentId: agents[who].id, workspaceId: ws.id, marketId: books[book], direction, limit, shares: toNano(shares).toString() });
    if (!out.ok) throw new Error(`order refused: ${JSON.stringify(out.body)}`);
    orders.push(orderId);
  }
  await app.deps.ds.query(`UPDATE markets SET status = 'closed' WHERE id = $1`, [books[2]]);
  const [l] = await app.deps.ds.query(`SELECT coalesce(max(id), 0)::int AS n FROM ledger_entries`);
  const [o] = await app.deps.ds.query(`SELECT coalesce(max(id), 0)::int AS n FROM outbox`);
  return { ws, metric: metric.name, books, agents, orders, ledgerFrom: l.n, outboxFrom: o.n };
}

const UNKNOWN_BOOK = '00000000-0000-4000-8000-000000000029';

function jobsOf(f: Floor, ops: readonly Op[], prefix: string): TradeJobData[] {
  const jobs: TradeJobData[] = [];
  ops.forEach((o, i) => {
    if (o.repeat !== null && jobs.length) {
      jobs.push(jobs[o.repeat % jobs.length]);
      return;
    }
    const amount = toNano(o.credits);
    const guard = o.guard === null ? {} : { limit: o.guard };
    const spec: TradeSpec =
      o.kind === 'buy'
        ? { mode: 'buy', direction: o.direction, amount, ...guard }
        : o.kind === 'target'
          ? { mode: 'target', targetValue: o.direction === 'higher' ? 530 : 470, maxBudget: amount }
          : { mode: 'sell', direction: o.direction, shares: amount / 2n };
    jobs.push({ requestId: `${prefix}-${i}`, agentId: f.agents[o.who].id, workspaceId: f.ws.id, marketId: o.book === 3 ? UNKNOWN_BOOK : f.books[o.book], spec: serializeSpec(spec) });
  });
  return jobs;
}

/** Everything the trades wrote on a floor, with its ids (and its request prefix) replaced by names, times and random ids left out. */
async function snapshot(f: Floor, prefix: string, outcomes: unknown[]) {
  const names = new Map<string, string>([[f.ws.id, 'WS'], [f.ws.owner.id, 'OWNER'], [f.metric, 'METRIC'], [prefix, 'REQ']]);
  f.books.forEach((id, i) => names.set(id, `BOOK${i}`));
  f.agents.forEach((a, i) => names.set(a.id, `AGENT${i}`));
  f.orders.forEach((id, i) => names.set(id, `ORDER${i}`));
  const q = (sql: string, params: unknown[]) => app.deps.ds.query(sql, params);
  const accounts = [...f.agents.map((a) => `agent:${a.id}`), ...f.books.flatMap((b) => [`pool:${b}`, `reserve:${b}`])];
  const data = {
    outcomes: outcomes.map((o) => JSON.parse(JSON.stringify(o), (k, v) => (k === 'tradeId' ? undefined : v))),
    balances: await q(`SELECT id, balance::text FROM accounts WHERE id = ANY($1::text[]) ORDER BY array_position($1::text[], id)`, [accounts]),
    positions: await q(`SELECT market_id, agent_id, shares_higher::text, shares_lower::text, net_cost::text FROM positions WHERE market_id = ANY($1::uuid[])`, [f.books]),
    trades: await q(
      `SELECT request_id, market_id, agent_id, kind, direction, shares::text, cost::text, probability_before, probability_after, consensus_before, consensus_after
         FROM trades WHERE market_id = ANY($1::uuid[]) ORDER BY seq`,
      [f.books],
    ),
    ledger: await q(`SELECT account_id, amount::text, kind, ref FROM ledger_entries WHERE id > $1 AND account_id = ANY($2::text[]) ORDER BY id`, [f.ledgerFrom, accounts]),
    requests: await q(`SELECT request_id, status, response::jsonb - 'tradeId' AS response FROM trade_requests WHERE request_id LIKE $1 ORDER BY request_id`, [`${prefix}-%`]),
    orders: await q(`SELECT id, filled::text, spent::text, reserve::text, status FROM limit_orders WHERE market_id = ANY($1::uuid[]) ORDER BY seq`, [f.books]),
    books: await q(`SELECT id, q_higher::text, q_lower::text, trade_count, volume::text, status FROM markets WHERE id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], id)`, [f.books]),
    events: await q(`SELECT type, data FROM outbox WHERE id > $1 AND workspace_id = $2 ORDER BY id`, [f.outboxFrom, f.ws.id]),
  };
  data.positions.sort((a: Record<string, string>, b: Record<string, string>) => `${names.get(a.market_id)}${names.get(a.agent_id)}`.localeCompare(`${names.get(b.market_id)}${names.get(b.agent_id)}`));
  let text = JSON.stringify(data);
  for (const [id, name] of names) text = text.split(id).join(name);
  return JSON.parse(text);
}

/** Per book, in the order applied: each accepted trade's prevConsensus is the previous one's consensus; the stored book's is the last one's. */
async function expectChained(jobs: readonly TradeJobData[], outcomes: readonly TradeOutcome[], order: readonly number[]) {
  const last = new Map<string, number>();
  for (const i of order) {
    const o = outcomes[i];
    if (!o.ok || jobs.indexOf(jobs[i]) !== i) continue; // a replay answers with the first outcome
    const body = o.body as { consensus: number; prevConsensus: number };
    if (last.has(jobs[i].marketId)) expect(body.prevConsensus).toBeCloseTo(last.get(jobs[i].marketId)!, 6);
    last.set(jobs[i].marketId, body.consensus);
  }
  for (const [id, c] of last) {
    const [mk] = await app.deps.ds.query(`SELECT b::text, q_higher::text, q_lower::text, range_min, range_max FROM markets WHERE id = $1`, [id]);
    const p = probability({ b: BigInt(mk.b), qHigher: BigInt(mk.q_higher), qLower: BigInt(mk.q_lower) });
    expect(consensusOf(p, mk.range_min, mk.range_max)).toBeCloseTo(c, 6);
  }
}

describe('set-based trade batches (issue 29)', () => {
  it('a random batch of buys, sells, redemptions, refusals and fills on several books equals the same trades one by one', async () => {
    const seen = { runs: 0, trades: 0, refused: 0, fills: 0, redeemed: 0, replays: 0, codes: {} as Record<string, number> };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 24 }), async (ops) => {
        seen.runs++;
        const [a, b] = [await floor(), await floor()];
        const pa = `batch${randomUUID().slice(0, 8)}`;
        const pb = `single${randomUUID().slice(0, 8)}`;
        const jobsA = jobsOf(a, ops, pa);
        const jobsB = jobsOf(b, ops, pb);
        const outA = await applyTradeBatch(app.deps, jobsA);
        // One by one, in the order the batch takes them: book by book (floor A's ids), arrival order within a book.
        const order = jobsA.map((_, i) => i).sort((x, y) => (jobsA[x].marketId < jobsA[y].marketId ? -1 : jobsA[x].marketId > jobsA[y].marketId ? 1 : x - y));
        const outB: unknown[] = new Array(jobsB.length);
        for (const i of order) outB[i] = await applyTradeJob(app.deps, jobsB[i]);
        for (const o of outA) {
          if (!o.ok) {
            seen.refused++;
            const code = String((o.body as { code?: string }).code);
            seen.codes[code] = (seen.codes[code] ?? 0) + 1;
          }
          else {
            seen.trades++;
            const body = o.body as { redeemed: string; limitFills?: unknown[] };
            if (BigInt(body.redeemed) > 0n) seen.redeemed++;
            seen.fills += body.limitFills?.length ?? 0;
          }
        }
        seen.replays += ops.filter((o) => o.repeat !== null).length;
        expect(await snapshot(a, pa, outA)).toEqual(await snapshot(b, pb, outB));
        // And not merely the same on both paths: each book's trades chain (each starts where the one
        // before it left the book) and the book ends where its last trade left it.
        await expectChained(jobsA, outA, order);
      }),
      { numRuns: 14 },
    );
    console.log(`batch = one by one: ${JSON.stringify(seen)}`);
    // The draw reached every case it is about.
    expect(seen.trades).toBeGreaterThan(20);
    expect(seen.refused).toBeGreaterThan(5);
    expect(seen.fills).toBeGreaterThan(0);
    expect(seen.redeemed).toBeGreaterThan(0);
    expect(seen.replays).toBeGreaterThan(0);
  }, 600_000);
});

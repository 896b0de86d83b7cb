import fc from 'fast-check';
import { readableNumbers } from '../../src/domain/readable';
import { buildWorkspace, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { freshBookId, trade, trader } from '../helpers/markets';

/**
 * Money at the edge (issue 27 item 3, issue 28 item 9): every credit amount in every answer prints
 * with at most 9 decimals (nano-units formatted exactly, no float noise), and an idempotent replay
 * answers exactly what the first answer did, through the same presenter.
 */

let app: TestApp;
let ws: TestWorkspace;

useTestApp((a) => (app = a));
beforeAll(async () => {
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
});

/** Fields that are credit amounts (consensus, probability and a fill's price are not money). */
const MONEY = new Set([
  'shares', 'cost', 'proceeds', 'redeemed', 'balance', 'spent', 'unspent', 'sharesSold', 'sharesKept', 'shortfall', 'liquidity',
  'totalCost', 'worth', 'profit', 'netCash', 'markValueConsensus', 'metricPayoutValue', 'pnlConsensus', 'pnlMetric',
  'filled', 'remaining', 'reserved', 'returned', 'price',
]);

function decimalsOf(n: number): number {
  const m = /^-?\d+(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(JSON.stringify(n))!;
  return Math.max(0, (m[1]?.length ?? 0) - Number(m[2] ?? 0));
}

/** The money fields of a body printed with more than 9 decimals, by path. */
function noiseIn(body: unknown, path = '', key = ''): string[] {
  if (typeof body === 'number') return MONEY.has(key) && !path.includes('limitFills') && decimalsOf(body) > 9 ? [`${path}=${JSON.stringify(body)}`] : [];
  if (Array.isArray(body)) return body.flatMap((v, i) => noiseIn(v, `${path}[${i}]`, key));
  if (body && typeof body === 'object') return Object.entries(body).flatMap(([k, v]) => noiseIn(v, `${path}.${k}`, k));
  return [];
}

const seen = { responses: 0, noisyResponses: 0, noisyNumbers: 0, byKind: {} as Record<string, [number, number]>, examples: [] as string[] };
function check(what: string, res: { status: number; body: unknown }, status = 200) {
  expect([what, res.status, res.status === status ? '' : JSON.stringify(res.body)]).toEqual([what, status, '']);
  seen.responses++;
  const noise = noiseIn(res.body);
  const kind = (seen.byKind[what.replace(/ \S+$/, '')] ??= [0, 0]);
  kind[0]++;
  if (noise.length) kind[1]++;
  if (noise.length) {
    seen.noisyResponses++;
    seen.noisyNumbers += noise.length;
    if (seen.examples.length < 6) seen.examples.push(`${what}: ${noise[0]}`);
  }
}
const withoutFlag = (b: Record<string, unknown>) => ({ ...b, idempotentReplay: undefined });

/** Credits with up to 9 decimals, as a client would send them (from a positive nano amount). */
const credits = (nano: bigint) => Number(`${nano / 1_000_000_000n}.${(nano % 1_000_000_000n).toString().padStart(9, '0')}`);

describe('money at the edge', () => {
  afterAll(() => {
    // Answers checked and those with noise, by kind ([checked, noisy]): the figures for the closing note.
    console.log(`money-edge: ${JSON.stringify(seen)}`);
  });

  it('random trades, their dry runs and replays, positions, portfolio and orders: at most 9 decimals, replays equal to the first answer', async () => {
    const books = [await freshBookId(app, ws, 500), await freshBookId(app, ws, 300), await freshBookId(app, ws, 720)];
    const traders: TestAgent[] = [];
    for (let i = 0; i < 4; i++) traders.push(await trader(app, ws, 5000));
    const held = new Map<string, { direction: string | null; shares: number }>();
    const steps = fc.sample(
      fc.record({
        who: fc.nat({ max: traders.length - 1 }),
        book: fc.nat({ max: books.length - 1 }),
        mode: fc.constantFrom('buy', 'buy', 'buy', 'sell', 'target'),
        direction: fc.constantFrom('higher', 'lower'),
        nano: fc.bigInt({ min: 1_000_000n, max: 40_000_000_000n }),
        fraction: fc.double({ min: 0.05, max: 1, noNaN: true }),
        target: fc.integer({ min: 150, max: 850 }),
        limit: fc.option(fc.integer({ min: 100, max: 900 }), { freq: 4 }),
      }),
      { numRuns: 60, seed: 27 },
    );
    for (const [i, s] of steps.entries()) {
      const who = traders[s.who];
      const marketId = books[s.book];
      const pos = held.get(`${who.id}|${marketId}`);
      let body: Record<string, unknown>;
      if (s.mode === 'sell' && pos?.direction && pos.shares > 0) {
        const sellNano = (BigInt(Math.round(pos.shares * 1e9)) * BigInt(Math.round(s.fraction * 1000))) / 1000n;
        body = { marketId, direction: pos.direction, sellShares: credits(sellNano > 0n ? sellNano : 1_000_000n) };
      } else if (s.mode === 'target') body = { marketId, targetValue: s.target, maxBudget: credits(s.nano) };
      else body = { marketId, direction: s.direction, amount: credits(s.nano), ...(s.limit === null ? {} : { limit: s.limit }) };
      const quote = await trade(app, ws, who, { ...body, dryRun: true });
      if (quote.status !== 200) continue; // a refusal (price guard, too small) has no amounts to check
      check(`dry run ${i}`, quote);
      const key = `money-edge-${i}-${who.id}`;
      const first = await trade(app, ws, who, body, key);
      if (first.status !== 200) continue;
      check(`trade ${i}`, first);
      const again = await trade(app, ws, who, body, key);
      check(`replay ${i}`, again);
      expect(again.body.idempotentReplay).toBe(true);
      expect(first.body.idempotentReplay).toBe(false);
      expect(withoutFlag(again.body)).toEqual(withoutFlag(first.body));
      held.set(`${who.id}|${marketId}`, first.body.position);
    }

    for (const [i, who] of traders.entries()) {
      const get = (path: string) => app.http.get(path).set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id);
      check(`positions ${i}`, await get(`/api/agents/${who.id}/positions`));
      check(`trades ${i}`, await get(`/api/agents/${who.id}/trades`));
      check(`market-pnl ${i}`, await get(`/api/agents/${who.id}/market-pnl`));
      check(`dashboard ${i}`, await get(`/api/agents/${who.id}/dashboard`));
      check(`balance ${i}`, await get('/api/agents/me/balance'));
      check(`mine ${i}`, await get('/api/agents/mine'));
    }
    check('participants', await app.http.get('/api/agents').set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id));

    const orders = fc.sample(
      fc.record({ who: fc.nat({ max: traders.length - 1 }), book: fc.nat({ max: books.length - 1 }), direction: fc.constantFrom('higher', 'lower'), limit: fc.integer({ min: 50, max: 950 }), nano: fc.bigInt({ min: 1_000_000n, max: 20_000_000_000n }), bySize: fc.boolean() }),
      { numRuns: 24, seed: 28 },
    );
    for (const [i, o] of orders.entries()) {
      const who = traders[o.who];
      const req = () =>
        app.http
          .post('/api/predictions/orders')
          .set('X-Agent-Key', who.key)
          .set('X-Workspace-Id', ws.id)
          .set('Idempotency-Key', `money-edge-order-${i}`)
          .send({ marketId: books[o.book], direction: o.direction, limit: o.limit, ...(o.bySize ? { shares: credits(o.nano) } : { amount: credits(o.nano) }) });
      const first = await req();
      if (first.status !== 200) continue;
      check(`order ${i}`, first);
      const again = await req();
      check(`order replay ${i}`, again);
      expect(again.body.idempotentReplay).toBe(true);
      expect(withoutFlag(again.body)).toEqual(withoutFlag(first.body));
      const get = (path: string) => app.http.get(path).set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id);
      check(`order get ${i}`, await get(`/api/predictions/orders/${first.body.id}`));
      if (first.body.status === 'open' && i % 3 === 0) {
        check(`cancel ${i}`, await app.http.delete(`/api/predictions/orders/${first.body.id}`).set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id));
      }
    }
    for (const b of books) check(`orderbook ${b}`, await app.http.get(`/api/predictions/markets/${b}/orderbook`).set('X-Workspace-Id', ws.id));
    for (const [i, who] of traders.entries()) {
      check(`orders ${i}`, await app.http.get('/api/predictions/orders').set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id));
    }

    expect(seen.responses).toBeGreaterThan(150);
    expect({ noisyResponses: seen.noisyResponses, examples: seen.examples }).toEqual({ noisyResponses: 0, examples: [] });
    await expectLedgerSound(app.deps);
  });

  it('a trade or a placement stored before the nano data shape (credits, no v) replays as it was stored', async () => {
    const marketId = await freshBookId(app, ws, 500);
    const who = await trader(app, ws, 100);
    const body = { marketId, direction: 'higher', amount: 2.5 };
    const first = await trade(app, ws, who, body, 'legacy-trade');
    check('legacy trade', first);
    const stored = (await app.deps.ds.query(`SELECT response FROM trade_requests WHERE idempotency_key = 'legacy-trade' AND agent_id = $1`, [who.id]))[0].response;
    expect(stored).toMatchObject({ v: 2, shares: expect.stringMatching(/^\d+$/), cash: expect.stringMatching(/^\d+$/), balance: expect.stringMatching(/^\d+$/) });
    // What the old code stored: the presented body (credits as numbers, float noise included).
    const legacy = { ...first.body, idempotentReplay: undefined, shares: first.body.shares + 1e-12 };
    await app.deps.ds.query(`UPDATE trade_requests SET response = $2 WHERE idempotency_key = 'legacy-trade' AND agent_id = $1`, [who.id, JSON.stringify(legacy)]);
    const again = await trade(app, ws, who, body, 'legacy-trade');
    expect(again.status).toBe(200);
    // As stored, read at the edge's 9 decimals (issue 56: every number of every answer): the noise is gone.
    expect(again.body).toEqual(readableNumbers({ ...JSON.parse(JSON.stringify(legacy)), idempotentReplay: true }));
    expect(again.body.shares).toBe(first.body.shares);

    const place = () =>
      app.http.post('/api/predictions/orders').set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id).set('Idempotency-Key', 'legacy-order').send({ marketId, direction: 'lower', limit: 300, shares: 3 });
    const placed = await place();
    check('legacy order', placed);
    const oldPlacement = { ...placed.body, idempotentReplay: undefined };
    await app.deps.ds.query(`UPDATE limit_orders SET placement = $2 WHERE id = $1`, [placed.body.id, JSON.stringify(oldPlacement)]);
    const replayed = await place();
    expect(replayed.status).toBe(200);
    expect(replayed.body).toEqual({ ...JSON.parse(JSON.stringify(oldPlacement)), idempotentReplay: true });
  });
});

import type { Response } from 'supertest';
import { readableNumbers, roundNumber } from '../../src/domain/readable';
import { buildWorkspace } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';

/**
 * Issue 56: every number in every answer has at most 9 decimals (a book opened at 420 read
 * 420.0000000008037). A scripted session (a metric at 420, trades both ways, a proposal with trades
 * on its branches, the listings, positions, history, standings) is read back, and no number in any
 * answer, refusals included, has more than 9 decimals.
 */
let app: TestApp;
useTestApp((a) => (app = a));

/** Decimals of a number as JSON writes it (1e-7 has 7, 1.5e-10 has 11). */
function decimalsOf(x: number): number {
  const [mantissa, exp] = String(x).split('e');
  const frac = (mantissa.split('.')[1] ?? '').length;
  return Math.max(0, frac - Number(exp ?? 0));
}

function longNumbers(value: unknown, path: string, out: string[]): void {
  if (typeof value === 'number') {
    if (decimalsOf(value) > 9) out.push(`${path} = ${value}`);
  } else if (Array.isArray(value)) value.forEach((v, i) => longNumbers(v, `${path}[${i}]`, out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) longNumbers(v, `${path}.${k}`, out);
}

it('the rounding rule: at most 9 decimals, integers and credits untouched, no -0', () => {
  expect(roundNumber(420.0000000008037)).toBe(420.000000001);
  expect(roundNumber(0.1 + 0.2)).toBe(0.3);
  expect(roundNumber(123456789.1234567)).toBe(123456789.1234567);
  expect(roundNumber(-1e-12)).toBe(0);
  expect(Object.is(roundNumber(-1e-12), 0)).toBe(true);
  expect(roundNumber(42)).toBe(42);
  expect(decimalsOf(1.5e-10)).toBe(11);
  const frozen = Object.freeze({ a: 1, b: [2, 'x'] });
  expect(readableNumbers(frozen)).toBe(frozen); // nothing to round: the same object, not a copy
  const d = new Date(0);
  expect(readableNumbers({ d, p: 0.12345678901 })).toEqual({ d, p: 0.123456789 });
});

it('a scripted session answers no number with more than 9 decimals', async () => {
  const answers: Array<{ what: string; body: unknown }> = [];
  const keep = (what: string, res: Response) => {
    answers.push({ what, body: res.body });
    return res;
  };
  const ws = await buildWorkspace(app, { public: true });
  const owner = { 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id };
  const metric = await createMetric(app, ws, { value: 420 });
  const other = await createMetric(app, ws, { value: 333.3 });
  const books = await marketsOf(app, ws, metric.id);
  answers.push({ what: 'markets', body: books });
  const a = await trader(app, ws, 5000);
  const b = await trader(app, ws, 5000);
  const book = books[0].id;
  keep('trade 1', await trade(app, ws, a, { marketId: book, direction: 'higher', amount: 7.3 }));
  keep('trade 2', await trade(app, ws, b, { marketId: book, direction: 'lower', amount: 13.7 }));
  keep('trade 3', await trade(app, ws, a, { marketId: book, direction: 'higher', amount: 1.1 }));
  keep('price guard', await trade(app, ws, b, { marketId: book, direction: 'higher', amount: 3, maxConsensus: 0.001 }));
  const otherBook = (await marketsOf(app, ws, other.id))[0].id;
  keep('trade other', await trade(app, ws, b, { marketId: otherBook, direction: 'lower', amount: 3.33 }));
  const proposal = keep('proposal', await app.http.post('/api/proposals').set(owner).send({ title: 'Ship it', metricIds: [metric.id, other.id] }));
  if (proposal.status < 300) {
    const p = keep('proposal read', await app.http.get(`/api/proposals/${proposal.body.id}`).set(owner)).body;
    for (const [i, mk] of (p.conditionalMarkets ?? []).slice(0, 4).entries()) {
      keep(`branch trade ${i}`, await trade(app, ws, i % 2 ? a : b, { marketId: mk.id, direction: i % 2 ? 'higher' : 'lower', amount: 2.9 + i }));
    }
    keep('proposal after', await app.http.get(`/api/proposals/${proposal.body.id}`).set(owner));
  }
  for (const [what, path] of [
    ['book', `/api/predictions/markets/${book}`],
    ['history', `/api/predictions/markets/${book}/history`],
    ['markets', `/api/predictions/markets?limit=50`],
    ['proposals', '/api/proposals'],
    ['status', '/api/status?trends=1&markets=1'],
    ['positions', `/api/agents/${a.id}/positions`],
    ['trades', `/api/agents/${a.id}/trades`],
    ['pnl', `/api/agents/${a.id}/market-pnl`],
    ['dashboard', `/api/agents/${a.id}/dashboard`],
    ['public profile', `/api/agents/${b.id}/public`],
    ['leaderboard', '/api/leaderboard'],
    ['order book', `/api/predictions/markets/${book}/orderbook`],
  ] as const) {
    keep(what, await app.http.get(path).set({ 'X-Agent-Key': a.key, 'X-Workspace-Id': ws.id }));
  }
  const long: string[] = [];
  for (const { what, body } of answers) longNumbers(body, what, long);
  expect(long).toEqual([]);
  // The session really priced floats: the answers hold consensus values that are not whole numbers.
  const consensus: number[] = [];
  for (const { body } of answers) JSON.stringify(body, (k, v) => (k === 'consensus' && typeof v === 'number' && consensus.push(v), v));
  expect(consensus.filter((c) => !Number.isInteger(c)).length).toBeGreaterThan(3);
});

import fc from 'fast-check';
import { DomainError } from '../../src/errors';
import { consensusOf, openBook, probability, type BookState } from '../../src/domain/lmsr';
import { MIN_TRADE_NANO, planTrade, type Holding, type TradeSpec } from '../../src/domain/trading';

const NANO = 1_000_000_000n;
const CODES = ['insufficient_shares', 'trade_too_small', 'price_moved', 'market_closed'];

const arbBook = fc
  .record({ liquidity: fc.integer({ min: 1, max: 100_000 }), p0: fc.double({ min: 0.01, max: 0.99, noNaN: true }) })
  .map(({ liquidity, p0 }) => openBook(BigInt(liquidity) * NANO, p0));
const arbHolding: fc.Arbitrary<Holding> = fc.oneof(
  fc.constant({ higher: 0n, lower: 0n }),
  fc.bigInt({ min: 1n, max: 500n * NANO }).map((h) => ({ higher: h, lower: 0n })),
  fc.bigInt({ min: 1n, max: 500n * NANO }).map((l) => ({ higher: 0n, lower: l })),
);
const dir = fc.constantFrom<'higher' | 'lower'>('higher', 'lower');
/** A limit half of the time: one on the wrong side of the consensus is refused (price_moved). */
const limit = fc.option(fc.double({ min: 1, max: 999, noNaN: true }), { nil: undefined, freq: 2 });
const credits = fc.bigInt({ min: 1n, max: 1000n * NANO });
/** Sells of any size (mostly more than is held), or of a part of the side held, so both sides of the property get cases. */
const arbSpecFor = (holding: Holding): fc.Arbitrary<TradeSpec> => {
  const heldSide = holding.higher > 0n ? 'higher' : holding.lower > 0n ? 'lower' : undefined;
  const held = holding.higher + holding.lower;
  const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
  return fc.oneof(
    w(3, fc.record({ mode: fc.constant('buy' as const), direction: dir, amount: credits, limit })),
    w(3, fc.record({ mode: fc.constant('target' as const), direction: fc.option(dir, { nil: undefined, freq: 2 }), targetValue: fc.double({ min: 0, max: 1000, noNaN: true }), maxBudget: credits, limit: fc.constant(undefined) })),
    w(1, fc.record({ mode: fc.constant('sell' as const), direction: dir, shares: fc.bigInt({ min: 1n, max: 600n * NANO }), limit })),
    ...(heldSide === undefined
      ? []
      : [w(3, fc.record({ mode: fc.constant('sell' as const), direction: fc.constant(heldSide), shares: fc.bigInt({ min: 1n, max: 100n }).map((pct) => (held * pct) / 100n || 1n), limit }))]),
  );
};
/** A book with the holder's shares in it, the holding, a trade and whether the market takes only sells (one case in four). */
const arbCase = fc
  .tuple(arbBook, arbHolding)
  .chain(([opened, holding]) => fc.tuple(fc.constant(opened), fc.constant(holding), arbSpecFor(holding), fc.oneof({ arbitrary: fc.constant(true), weight: 1 }, { arbitrary: fc.constant(false), weight: 3 })));

/** How far one nano-share can move the call on a 0..1000 range (p(1-p) <= 1/4), with a float's slack. */
const oneShare = (book: BookState): number => Math.max(1e-6, 250 / Number(book.b) + 1e-9);

/** A holder's shares are part of the book's outstanding quantities. */
const withHolding = (book: BookState, h: Holding): BookState => ({ ...book, qHigher: book.qHigher + h.higher, qLower: book.qLower + h.lower });

/** Apply a book's share changes by hand to check the plan's book. */
function expectedBook(book: BookState, plan: ReturnType<typeof planTrade>): BookState {
  const sign = plan.kind === 'buy' ? 1n : -1n;
  const b = plan.direction === 'higher' ? { ...book, qHigher: book.qHigher + sign * plan.shares } : { ...book, qLower: book.qLower + sign * plan.shares };
  return { ...b, qHigher: b.qHigher - plan.redeemed, qLower: b.qLower - plan.redeemed };
}

describe('planTrade', () => {
  it('either refuses with a trading code or returns a consistent plan', () => {
    const seen = { runs: 0, accepted: 0, refused: new Set<string>() };
    fc.assert(
      fc.property(arbCase, ([opened, holding, spec, sellOnly]) => {
        seen.runs++;
        const book = withHolding(opened, holding);
        let plan;
        try {
          plan = planTrade({ book, rangeMin: 0, rangeMax: 1000, holding, spec, sellOnly });
        } catch (err) {
          expect(err).toBeInstanceOf(DomainError);
          expect(CODES).toContain((err as DomainError).code);
          seen.refused.add((err as DomainError).code);
          return;
        }
        seen.accepted++;
        expect(plan.cash).toBeGreaterThanOrEqual(MIN_TRADE_NANO);
        expect(plan.shares).toBeGreaterThan(0n);
        expect(plan.book).toEqual(expectedBook(book, plan));
        // One net side after every trade.
        expect(plan.holding.higher === 0n || plan.holding.lower === 0n).toBe(true);
        expect(plan.holding.higher).toBeGreaterThanOrEqual(0n);
        expect(plan.holding.lower).toBeGreaterThanOrEqual(0n);
        expect(plan.probabilityAfter).toBeCloseTo(probability(plan.book), 12);
        expect(plan.consensusAfter).toBeCloseTo(consensusOf(plan.probabilityAfter, 0, 1000), 9);
        if (spec.mode === 'buy') {
          expect(sellOnly).toBe(false);
          expect(plan.cash).toBeLessThanOrEqual(spec.amount);
          if (spec.limit !== undefined) {
            // A buy never leaves the call past its limit, beyond its rounding of one share (shares
            // round up to reach a price): on a 0..1000 range one nano-share moves the call by at most
            // 250 / b, which is 1.15e-6 on a 1-credit book at p0 0.01 (b = 217,147,240).
            if (plan.direction === 'higher') expect(plan.consensusAfter).toBeLessThanOrEqual(spec.limit + oneShare(book));
            else expect(plan.consensusAfter).toBeGreaterThanOrEqual(spec.limit - oneShare(book));
            expect(plan.spent! + plan.unspent!).toBe(spec.amount);
          }
        }
        if (spec.mode === 'target') {
          expect(plan.cash).toBeLessThanOrEqual(spec.maxBudget);
          expect(plan.spent! + plan.unspent!).toBe(spec.maxBudget);
          if (plan.direction === 'higher') expect(plan.consensusAfter).toBeLessThanOrEqual(Math.max(spec.targetValue, 0.001) + oneShare(book));
          else expect(plan.consensusAfter).toBeGreaterThanOrEqual(Math.min(spec.targetValue, 999.999) - oneShare(book));
        }
        if (spec.mode === 'sell') {
          expect(plan.shares).toBeLessThanOrEqual(spec.shares);
          expect(plan.redeemed).toBe(0n);
          const held = spec.direction === 'higher' ? holding.higher : holding.lower;
          expect((spec.direction === 'higher' ? plan.holding.higher : plan.holding.lower) + plan.shares).toBe(held);
        }
      }),
      { numRuns: 400 },
    );
    // A planTrade that refused everything (or nearly) would pass the property vacuously: enough
    // cases must reach the plan's checks (measured 164-188 of 400 over 8 seeds, mean 179, sd ~10),
    // and every refusal code must be met.
    expect(seen.runs).toBe(400);
    expect(seen.accepted).toBeGreaterThanOrEqual(135);
    expect([...seen.refused].sort()).toEqual([...CODES].sort());
  });

  it('redeems exactly the matched pairs when buying against a held side, leaving the price unmoved by the redemption', () => {
    const held = { higher: 5n * NANO, lower: 0n };
    const book = withHolding(openBook(100n * NANO, 0.5), held);
    const plan = planTrade({ book, rangeMin: 0, rangeMax: 1000, holding: held, spec: { mode: 'buy', direction: 'lower', amount: 2n * NANO }, sellOnly: false });
    const bought = plan.shares;
    expect(plan.redeemed).toBe(bought < 5n * NANO ? bought : 5n * NANO);
    const beforeRedeem = { ...book, qLower: book.qLower + bought };
    expect(plan.probabilityAfter).toBeCloseTo(probability(beforeRedeem), 12);
  });

  it.each<[string, TradeSpec, Holding, boolean, string]>([
    ['a buy on a closed book', { mode: 'buy', direction: 'higher', amount: NANO }, { higher: 0n, lower: 0n }, true, 'market_closed'],
    ['selling shares not held', { mode: 'sell', direction: 'higher', shares: NANO }, { higher: 0n, lower: 5n }, false, 'insufficient_shares'],
    ['a dust buy', { mode: 'buy', direction: 'higher', amount: 999n }, { higher: 0n, lower: 0n }, false, 'trade_too_small'],
    ['a buy whose limit is already passed', { mode: 'buy', direction: 'higher', amount: NANO, limit: 400 }, { higher: 0n, lower: 0n }, false, 'price_moved'],
    ['a target already reached', { mode: 'target', direction: 'lower', targetValue: 600, maxBudget: NANO }, { higher: 0n, lower: 0n }, false, 'price_moved'],
  ])('refuses %s', (_label, spec, holding, sellOnly, code) => {
    const book = openBook(100n * NANO, 0.5);
    expect(() => planTrade({ book, rangeMin: 0, rangeMax: 1000, holding, spec, sellOnly })).toThrow(expect.objectContaining({ code }));
  });

  it('a closed book still accepts a sell', () => {
    const book = { ...openBook(100n * NANO, 0.5) };
    const withShares = { ...book, qHigher: book.qHigher + 10n * NANO };
    const plan = planTrade({ book: withShares, rangeMin: 0, rangeMax: 1000, holding: { higher: 10n * NANO, lower: 0n }, spec: { mode: 'sell', direction: 'higher', shares: 4n * NANO }, sellOnly: true });
    expect(plan.kind).toBe('sell');
    expect(plan.holding.higher).toBe(6n * NANO);
  });
});

import fc from 'fast-check';
import { narrowsMetrics, type Capability } from '../../src/domain/capabilities';
import { checkTradable, tradeSpecOf, type TradableBook } from '../../src/domain/trading';
import { DomainError } from '../../src/errors';

const code = (fn: () => unknown): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
};

describe('tradeSpecOf: which of the three modes a trade body asks for', () => {
  it('buy, target and sell, with credits as exact nano', () => {
    expect(tradeSpecOf({ direction: 'higher', amount: 2.5 }).spec).toEqual({ mode: 'buy', direction: 'higher', amount: 2_500_000_000n, limit: undefined });
    expect(tradeSpecOf({ targetValue: 40, maxBudget: 10, limit: 0.7, direction: 'lower' }).spec).toEqual({
      mode: 'target',
      direction: 'lower',
      targetValue: 40,
      maxBudget: 10_000_000_000n,
      limit: 0.7,
    });
    expect(tradeSpecOf({ direction: 'lower', sellShares: 0.000000001 }).spec).toEqual({ mode: 'sell', direction: 'lower', shares: 1n, limit: undefined });
  });

  it('superseded fields still work, each with a warning', () => {
    const r = tradeSpecOf({ value: 12, amount: 3 });
    expect(r.spec).toMatchObject({ mode: 'target', targetValue: 12, maxBudget: 3_000_000_000n });
    expect(r.warnings).toHaveLength(2);
    expect(tradeSpecOf({ targetValue: 12, maxBudget: 3 }).warnings).toEqual([]);
  });

  it('refuses what names no mode or mixes them, with a sentence', () => {
    expect(code(() => tradeSpecOf({}))).toBe('validation_failed');
    expect(code(() => tradeSpecOf({ amount: 1 }))).toBe('validation_failed');
    expect(code(() => tradeSpecOf({ sellShares: 1 }))).toBe('validation_failed');
    expect(code(() => tradeSpecOf({ sellShares: 1, direction: 'higher', amount: 1 }))).toBe('validation_failed');
    expect(code(() => tradeSpecOf({ targetValue: 3 }))).toBe('validation_failed');
    expect(code(() => tradeSpecOf({ targetValue: 3, maxBudget: 1, limit: 0.5 }))).toBe('validation_failed');
  });

  it('property: every accepted body yields one mode whose amount is the nano of its credits', () => {
    let accepted = 0;
    const credits = fc.integer({ min: 1, max: 10 ** 12 }).map((n) => n / 1000);
    fc.assert(
      fc.property(
        fc.record(
          { direction: fc.constantFrom('higher' as const, 'lower' as const), amount: credits, targetValue: fc.double({ min: -1e6, max: 1e6, noNaN: true }), maxBudget: credits, sellShares: credits },
          { requiredKeys: [] },
        ),
        (b) => {
          const c = code(() => tradeSpecOf(b));
          if (c !== null) return expect(c).toBe('validation_failed');
          accepted++;
          const { spec } = tradeSpecOf(b);
          if (spec.mode === 'sell') expect(spec.shares).toBe(BigInt(Math.round(b.sellShares! * 1000)) * 1_000_000n);
          if (spec.mode === 'buy') expect(spec.amount).toBe(BigInt(Math.round(b.amount! * 1000)) * 1_000_000n);
          if (spec.mode === 'target') expect(spec.maxBudget).toBe(BigInt(Math.round((b.maxBudget ?? b.amount)! * 1000)) * 1_000_000n);
        },
      ),
      { numRuns: 500 },
    );
    // About 1 in 5 random bodies names exactly one mode (measured 97 of 500); a tradeSpecOf that
    // refused everything fails here.
    expect(accepted).toBeGreaterThan(50);
  });
});

describe('checkTradable: refusals that depend on the book', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  const book = (over: Partial<TradableBook> = {}): TradableBook => ({
    status: 'open',
    funded: true,
    b: 1_000n,
    proposalId: null,
    closeReason: null,
    tradingEndsAt: null,
    voidReason: null,
    ...over,
  });

  it('an open funded book takes buys and sells', () => {
    expect(checkTradable(book(), now, false)).toEqual({ sellOnly: false });
    expect(checkTradable(book(), now, true)).toEqual({ sellOnly: false });
  });

  it('each state answers its code', () => {
    expect(code(() => checkTradable(book({ status: 'resolved' }), now, true))).toBe('market_resolved');
    expect(code(() => checkTradable(book({ status: 'voided', voidReason: 'metric deleted' }), now, true))).toBe('market_voided');
    expect(code(() => checkTradable(book({ funded: false, b: 0n }), now, false))).toBe('market_unfunded');
    expect(code(() => checkTradable(book({ status: 'closed' }), now, false))).toBe('market_closed');
    expect(checkTradable(book({ status: 'closed' }), now, true)).toEqual({ sellOnly: true });
  });

  it("a decided or past-deadline proposal's branch refuses buys and sells alike", () => {
    expect(code(() => checkTradable(book({ proposalId: 'p', closeReason: 'proposal_closed' }), now, true))).toBe('proposal_closed');
    expect(code(() => checkTradable(book({ proposalId: 'p', tradingEndsAt: now }), now, false))).toBe('proposal_closed');
    expect(checkTradable(book({ proposalId: 'p', tradingEndsAt: new Date(now.getTime() + 1) }), now, false)).toEqual({ sellOnly: false });
  });
});

describe('narrowsMetrics', () => {
  const caps = (...c: Capability[]) => new Set<Capability>(c);
  it('only a group with per-metric entries narrows, and never for a manager', () => {
    expect(narrowsMetrics([], caps('read', 'trade'))).toBe(false);
    expect(narrowsMetrics([{ capabilities: ['read'], metricPermissions: {} }], caps('read'))).toBe(false);
    expect(narrowsMetrics([{ capabilities: ['read'], metricPermissions: { m1: { trade: false } } }], caps('read', 'trade'))).toBe(true);
    expect(narrowsMetrics([{ capabilities: ['read'], metricPermissions: { m1: { trade: false } } }], caps('read', 'trade', 'manage'))).toBe(false);
  });
});

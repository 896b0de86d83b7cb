import fc from 'fast-check';
import { loadConfig } from '../../src/config';
import { depositSplit, feeBasisPoints, recheckDelay, unitsPerCredit, unitsToNano, withdrawalUnits } from '../../src/domain/credits';

const NANO = 1_000_000_000n;
/** Units per credit: the common ones (0.01 USD at 6 decimals) and odd ones that do not divide a credit's nano-units. */
const arbUpc = fc.oneof(fc.constantFrom(10_000n, 1_000_000n, 1n, 30_000n, 7n), fc.bigInt({ min: 1n, max: 10_000_000n }));
const arbBps = fc.oneof(fc.constantFrom(0n, 200n, 250n, 10_000n), fc.bigInt({ min: 0n, max: 5_000n }));
const arbPaid = fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.bigInt({ min: 0n, max: 10n ** 24n }));

describe('credits <-> token units', () => {
  it('unitsPerCredit: a whole number of token units per credit, or a RangeError', () => {
    expect(unitsPerCredit(0.01, 6)).toBe(10_000n);
    expect(unitsPerCredit(1, 6)).toBe(1_000_000n);
    expect(unitsPerCredit(0.07, 6)).toBe(70_000n); // 0.07 * 1e6 is 70000.00000000001 in floats
    expect(unitsPerCredit(0.01, 18)).toBe(10_000_000_000_000_000n);
    expect(() => unitsPerCredit(0.0000001, 6)).toThrow(RangeError); // a tenth of a unit
    expect(() => unitsPerCredit(0.0000015, 6)).toThrow(RangeError); // 1.5 units
    expect(() => unitsPerCredit(0, 6)).toThrow(RangeError);
    fc.assert(fc.property(fc.integer({ min: 1, max: 1_000_000 }), (cents) => unitsPerCredit(cents / 100, 6) === BigInt(cents) * 10_000n));
  });

  it('feeBasisPoints: percent to basis points; finer than a basis point or negative is refused', () => {
    expect([feeBasisPoints(0), feeBasisPoints(2), feeBasisPoints(2.5), feeBasisPoints(0.01)]).toEqual([0n, 200n, 250n, 1n]);
    expect(() => feeBasisPoints(0.001)).toThrow(RangeError);
    expect(() => feeBasisPoints(-1)).toThrow(RangeError);
    fc.assert(fc.property(fc.integer({ min: 0, max: 100_000 }), (bps) => feeBasisPoints(bps / 100) === BigInt(bps)));
  });

  it('withdrawalUnits: exact both ways, null when the amount is not a whole number of units', () => {
    expect(withdrawalUnits(40n * NANO, 10_000n)).toBe(400_000n);
    expect(withdrawalUnits(1n, 10_000n)).toBeNull(); // a nano-credit is a tenth of a thousandth of a unit
    expect(withdrawalUnits(100_000n, 10_000n)).toBe(1n); // the smallest amount: 0.0001 credits
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 18n }), arbUpc, (amount, upc) => {
        const units = withdrawalUnits(amount, upc);
        if (units === null) return (amount * upc) % NANO !== 0n;
        return units * NANO === amount * upc && unitsToNano(units, upc) === amount;
      }),
    );
    // Whole credits always convert.
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 10n ** 9n }), arbUpc, (credits, upc) => withdrawalUnits(credits * NANO, upc) === credits * upc));
  });
});

describe('the deposit split', () => {
  it('the service numbers: 10 USDC at 0.01 USD a credit and 2% -> 980 credits and 20 to fees; 5.1 USDC -> 500 and 10', () => {
    expect(depositSplit(10_000_000n, 10_000n, 200n)).toEqual({ gross: 1000n * NANO, credits: 980n * NANO, fee: 20n * NANO });
    expect(depositSplit(5_100_000n, 10_000n, 200n)).toEqual({ gross: 510n * NANO, credits: 500n * NANO, fee: 10n * NANO });
    // 1 USDC: 100 gross, floor(100 / 1.02) = 98 issued, the fee takes the rest (2).
    expect(depositSplit(1_000_000n, 10_000n, 200n)).toEqual({ gross: 100n * NANO, credits: 98n * NANO, fee: 2n * NANO });
    // Less than one credit's worth with its fee: nothing issued, all of it to the fee account.
    expect(depositSplit(10_100n, 10_000n, 200n)).toEqual({ gross: 1_010_000_000n, credits: 0n, fee: 1_010_000_000n });
    expect(depositSplit(0n, 10_000n, 200n)).toEqual({ gross: 0n, credits: 0n, fee: 0n });
    expect(() => depositSplit(-1n, 10_000n, 200n)).toThrow(RangeError);
  });

  it('credits + fee = gross, credits are whole and floor(paid / (value x (1 + fee))), the fee at least its rate; nothing created or lost to the nano', () => {
    fc.assert(
      fc.property(arbPaid, arbUpc, arbBps, (paid, upc, bps) => {
        const { gross, credits, fee } = depositSplit(paid, upc, bps);
        const whole = credits / NANO;
        // The whole and the parts.
        expect(credits + fee).toBe(gross);
        expect(credits % NANO).toBe(0n);
        expect(fee >= 0n && credits >= 0n).toBe(true);
        // gross is what was paid, in nano-credits, rounded down by less than one nano (exact when upc divides a credit's nano).
        expect(gross * upc <= paid * NANO && paid * NANO < (gross + 1n) * upc).toBe(true);
        if (NANO % upc === 0n) expect(gross * upc).toBe(paid * NANO);
        // whole = floor(paid / (upc * (1 + bps / 10,000))), checked by its defining inequality.
        const perCredit = upc * (10_000n + bps);
        expect(whole * perCredit <= paid * 10_000n && paid * 10_000n < (whole + 1n) * perCredit).toBe(true);
        // The fee account gets at least the rate on what was issued (plus the floored remainder).
        expect(fee * 10_000n >= credits * bps).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('paying more never issues fewer credits nor a smaller gross', () => {
    fc.assert(
      fc.property(arbPaid, fc.bigInt({ min: 0n, max: 10n ** 9n }), arbUpc, arbBps, (paid, more, upc, bps) => {
        const a = depositSplit(paid, upc, bps);
        const b = depositSplit(paid + more, upc, bps);
        return b.credits >= a.credits && b.gross >= a.gross;
      }),
    );
  });
});

describe('the re-check backoff', () => {
  it('starts at first, doubles, stops at the cap, and never overflows', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => recheckDelay(n, 2000, 60_000))).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000]);
    expect(recheckDelay(1_000_000, 2000, 60_000)).toBe(60_000);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 600_000 }), fc.integer({ min: 1, max: 3_600_000 }), (n, first, cap) => {
        const d = recheckDelay(n, first, cap);
        const next = recheckDelay(n + 1, first, cap);
        return Number.isFinite(d) && d <= cap && d >= Math.min(first, cap) && next >= d && (d === cap || next === Math.min(cap, 2 * d));
      }),
    );
  });
});

describe('configuration', () => {
  it('with a chain configured, a credit value or fee the conversion cannot use exactly is refused at start', () => {
    const chain = { CHAIN_RPC_URL: 'http://127.0.0.1:8545', CHAIN_ID: '31337' };
    expect(() => loadConfig({ ...chain, CREDIT_VALUE_USD: '0.0000001' })).toThrow(/Invalid configuration:[\s\S]*CREDIT_VALUE_USD/);
    expect(() => loadConfig({ ...chain, BUY_FEE_PERCENT: '0.001' })).toThrow(/Invalid configuration:[\s\S]*BUY_FEE_PERCENT/);
    expect(loadConfig({ ...chain, CREDIT_VALUE_USD: '0.01', BUY_FEE_PERCENT: '2.5' }).CREDIT_VALUE_USD).toBe(0.01);
    // Without a chain the values are not used for conversions.
    expect(loadConfig({ CREDIT_VALUE_USD: '0.0000001' }).CREDIT_VALUE_USD).toBe(0.0000001);
  });
});

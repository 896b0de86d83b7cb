import fc from 'fast-check';
import { EXACT_CREDITS, formatCredits, NANO_PER_CREDIT, toCredits, toNano, withCredits } from '../../src/domain/money';

/** Decimals a JSON number prints with (exponent form included: 1e-7 has 7). */
function decimalsOf(text: string): number {
  const m = /^-?\d+(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!m) throw new Error(`not a JSON number: ${text}`);
  return Math.max(0, (m[1]?.length ?? 0) - Number(m[2] ?? 0));
}

/** The exact decimal string back to nano (integer arithmetic). */
function parseNano(s: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,9}))?$/.exec(s);
  if (!m) throw new Error(`not a credit decimal: ${s}`);
  const nano = BigInt(m[2]) * NANO_PER_CREDIT + BigInt((m[3] ?? '').padEnd(9, '0'));
  return m[1] ? -nano : nano;
}

const EXACT_NANO = BigInt(EXACT_CREDITS) * NANO_PER_CREDIT;
const sign = (n: bigint) => fc.boolean().map((neg) => (neg ? -n : n));
/** 0 to 10^17 nano (10^8 credits) both signs, with everyday and tiny amounts and the exact bound's edge drawn often. */
const anyNano = fc
  .oneof(
    fc.bigInt({ min: 0n, max: 10n ** 17n }),
    fc.bigInt({ min: 0n, max: 10n ** 12n }),
    fc.bigInt({ min: 0n, max: 10n ** 10n }), // up to 10 credits: where the old float sum was noisy most often (about 1 in 20)
    fc.bigInt({ min: 0n, max: 10n ** 4n }),
    fc.bigInt({ min: EXACT_NANO - 10n ** 6n, max: EXACT_NANO - 1n }),
  )
  .chain(sign);
const exactNano = fc.oneof(fc.bigInt({ min: 0n, max: EXACT_NANO - 1n }), fc.bigInt({ min: 0n, max: 10n ** 12n })).chain(sign);

describe('money at the edge', () => {
  it('formatCredits is the exact decimal: at most 9 decimals, no trailing zeros, parses back to the same nano', () => {
    fc.assert(
      fc.property(anyNano, (n) => {
        const s = formatCredits(n);
        expect(decimalsOf(s)).toBeLessThanOrEqual(9);
        expect(s).not.toMatch(/\.\d*0$/);
        expect(parseNano(s)).toBe(n);
      }),
      { numRuns: 5000 },
    );
  });

  it('toCredits prints in JSON with at most 9 decimals, whatever the amount', () => {
    fc.assert(
      fc.property(anyNano, (n) => {
        expect(decimalsOf(JSON.stringify(toCredits(n)))).toBeLessThanOrEqual(9);
      }),
      { numRuns: 5000 },
    );
  });

  it('below EXACT_CREDITS the JSON number is the exact decimal and toNano gives the same nano back', () => {
    fc.assert(
      fc.property(exactNano, (n) => {
        const json = JSON.stringify({ amount: toCredits(n) });
        const back = JSON.parse(json).amount as number;
        expect(toNano(back)).toBe(n);
        // The printed number is the short decimal itself (modulo exponent notation for tiny amounts).
        expect(parseNano(formatCredits(toNano(back)))).toBe(n);
        expect(Number(formatCredits(n))).toBe(back);
      }),
      { numRuns: 5000 },
    );
  });

  it('above it a few nano may be lost (one spacing of the double), never more', () => {
    // Below 1e17 nano (1e8 credits) doubles are at most 2^-26 credits (~15 nano) apart; the printed
    // number is the shortest decimal of the double, which toNano reads back: within one spacing.
    fc.assert(
      fc.property(fc.bigInt({ min: EXACT_NANO, max: 10n ** 17n }).chain(sign), (n) => {
        const d = toNano(JSON.parse(JSON.stringify(toCredits(n))));
        expect(d - n <= 15n && n - d <= 15n).toBe(true);
      }),
    );
  });

  it('the float noise the old arithmetic made is gone', () => {
    expect(JSON.stringify(toCredits(16_683_973_774n))).toBe('16.683973774');
    expect(JSON.stringify(toCredits(1_530_730_839n))).toBe('1.530730839');
    expect(formatCredits(-500_000_000n)).toBe('-0.5');
    expect(formatCredits(0n)).toBe('0');
    expect(formatCredits(100n)).toBe('0.0000001');
  });

  it('withCredits formats the bigints of a document (deep) and leaves the rest', () => {
    const d = new Date(0);
    expect(withCredits({ a: 1_500_000_000n, b: [{ c: -1n }], s: 'x', n: 2, z: null, d })).toEqual({ a: 1.5, b: [{ c: -0.000000001 }], s: 'x', n: 2, z: null, d });
  });
});

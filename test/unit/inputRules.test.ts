import fc from 'fast-check';
import { fitsNano, toNano } from '../../src/domain/money';
import { badTextPath } from '../../src/api/registry';

describe('fitsNano: the one credit-amount rule (at most 9 decimals)', () => {
  it('accepts what has at most 9 decimals and refuses finer, whatever the binary expansion', () => {
    for (const x of [0, 1, 0.1, 0.3, 21952073.003, 1e-9, 123.456789012, 1e12, 5e-9]) expect(fitsNano(x)).toBe(true);
    for (const x of [1e-10, 1.0000000001, 0.1 + 0.2, 5e-10, Number.NaN, Infinity]) expect(fitsNano(x)).toBe(false);
  });

  it('property: every whole number of nano-credits fits and converts exactly; one more decimal does not fit', () => {
    let checked = 0;
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.integer({ min: 1, max: 9 }), (nano, digit) => {
        const credits = Number(`${nano / 10n ** 9n}.${(nano % 10n ** 9n).toString().padStart(9, '0')}`);
        if (!Number.isFinite(credits) || toNano(credits) !== nano) return; // beyond 2^53 nano a double cannot hold it
        checked++;
        expect(fitsNano(credits)).toBe(true);
        const finer = Number(`${nano / 10n ** 9n}.${(nano % 10n ** 9n).toString().padStart(9, '0')}${digit}`);
        // Only where a double can hold the tenth decimal (about 16 significant digits in all).
        if (/\.\d{10}/.test(String(finer))) expect(fitsNano(finer)).toBe(false);
      }),
      { numRuns: 400 },
    );
    expect(checked).toBeGreaterThan(50);
  });
});

describe('badTextPath: valid Unicode text only', () => {
  it('finds lone surrogates and replacement characters in values and keys, at any depth', () => {
    expect(badTextPath({ a: 'fine \ud83d\ude80', b: [1, 'ok'] })).toBeNull();
    expect(badTextPath({ a: { b: ['x', 'half \ud83d'] } })).toEqual(['a', 'b', '1']);
    expect(badTextPath({ ['\udc00']: 1 })).toEqual(['\udc00']);
    expect(badTextPath('bytes \ufffd')).toEqual([]);
  });
});

import fc from 'fast-check';
import { splitProRata } from '../../src/domain/funding';

describe('splitProRata (a pool remainder back to its funders)', () => {
  it('one funder gets all of it', () => {
    expect(splitProRata(123_456_789n, [{ key: 'a', amount: 100n }])).toEqual([{ key: 'a', amount: 123_456_789n }]);
  });

  it('pays each funder its share rounded down, the dust to the first funder', () => {
    // 100 split 1:1:1 -> 33 each, the one nano of dust to the first.
    expect(splitProRata(100n, [{ key: 'a', amount: 5n }, { key: 'b', amount: 5n }, { key: 'c', amount: 5n }])).toEqual([
      { key: 'a', amount: 34n },
      { key: 'b', amount: 33n },
      { key: 'c', amount: 33n },
    ]);
    // 90 credits put in as 60 + 30, 45 left: 30 and 15.
    const nano = 1_000_000_000n;
    expect(splitProRata(45n * nano, [{ key: 'x', amount: 60n * nano }, { key: 'y', amount: 30n * nano }])).toEqual([
      { key: 'x', amount: 30n * nano },
      { key: 'y', amount: 15n * nano },
    ]);
  });

  it('nothing to split pays zeros; bad input is refused', () => {
    expect(splitProRata(0n, [{ key: 1, amount: 3n }, { key: 2, amount: 4n }]).map((s) => s.amount)).toEqual([0n, 0n]);
    expect(() => splitProRata(-1n, [{ key: 1, amount: 1n }])).toThrow(RangeError);
    expect(() => splitProRata(1n, [])).toThrow(RangeError);
    expect(() => splitProRata(1n, [{ key: 1, amount: 0n }])).toThrow(RangeError);
  });

  it('property: the shares sum to the remainder exactly, none exceeds its exact share by a nano except the first, order kept', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.array(fc.bigInt({ min: 1n, max: 10n ** 15n }), { minLength: 1, maxLength: 8 }), (remainder, amounts) => {
        const out = splitProRata(remainder, amounts.map((amount, key) => ({ key, amount })));
        const total = amounts.reduce((s, a) => s + a, 0n);
        expect(out.reduce((s, x) => s + x.amount, 0n)).toBe(remainder);
        out.forEach((x, i) => {
          expect(x.key).toBe(i);
          const exactFloor = (remainder * amounts[i]) / total;
          if (i === 0) expect(x.amount - exactFloor).toBeLessThan(BigInt(amounts.length));
          else expect(x.amount).toBe(exactFloor);
          expect(x.amount >= 0n).toBe(true);
        });
      }),
    );
  });
});

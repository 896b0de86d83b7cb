import fc from 'fast-check';
import { arrayLiteral } from '../../src/db/arrayLiteral';
import { useTestApp, type TestApp } from '../helpers/harness';

/**
 * The hot statements' arrays go to Postgres as literals of our own (db/arrayLiteral.ts), most
 * elements unquoted. Postgres must read each literal as the same array node-postgres's own encoding
 * gives it: same elements, same NULLs, for text, bigint, int and float8 arrays.
 */
describe('array parameters as literals of our own', () => {
  let app: TestApp;
  useTestApp((a) => (app = a));

  const tricky = fc.constantFrom('NULL', 'null', 'Null', '', ' ', ' a', 'a ', 'a b', '"', '\\', '{', '}', ',', 'a,b', '{a}', "'", 'x\ny', '\t', 'é', '🙂', 'NaN');
  const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.uuid(), tricky).filter((s) => !s.includes('\0'));

  async function both(type: string, values: unknown[]): Promise<[unknown, unknown]> {
    const literal = arrayLiteral(values);
    expect(literal).not.toBeNull();
    const [row] = await app.deps.ds.query(`SELECT $1::${type}[] AS ours, $2::${type}[] AS theirs`, [literal, values]);
    return [row.ours, row.theirs];
  }

  it('text arrays, with NULLs and every delimiter Postgres knows', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(text, { nil: null }), { maxLength: 12 }), async (values) => {
        const [ours, theirs] = await both('text', values);
        expect(ours).toEqual(theirs);
        expect(ours).toEqual(values);
      }),
      { numRuns: 150 },
    );
  });

  it('bigint, int and float8 arrays from numbers, bigints and numeric strings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String)), { nil: null }), { maxLength: 10 }),
        fc.array(fc.integer(), { maxLength: 10 }),
        fc.array(fc.oneof(fc.double({ noNaN: true }), fc.constant(Number.NaN)), { maxLength: 10 }),
        async (bigs, ints, floats) => {
          const [b1, b2] = await both('bigint', bigs);
          expect(b1).toEqual(b2);
          const [i1, i2] = await both('int', ints);
          expect(i1).toEqual(i2);
          const [f1, f2] = await both('float8', floats);
          expect(f1).toEqual(f2);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('leaves what it does not encode to node-postgres', () => {
    expect(arrayLiteral([new Date(0)])).toBeNull();
    expect(arrayLiteral([{ a: 1 }])).toBeNull();
    expect(arrayLiteral([['a']])).toBeNull();
    expect(arrayLiteral(['a', 'NULL', null, 'a b', 'q"\\'])).toBe('{a,"NULL",NULL,"a b","q\\"\\\\"}');
  });
});

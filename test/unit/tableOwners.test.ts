import { join } from 'node:path';
import { checkTree } from '../../scripts/check-tables';
import { entityTables, scanWrites, stripComments } from '../../scripts/lib/tableWrites';

const tables = new Set(['markets', 'limit_orders']);
const entities = new Map([['Market', 'markets'], ['LimitOrder', 'limit_orders']]);

describe('table ownership scan', () => {
  test('finds SQL and TypeORM writes, not reads or comments', () => {
    const src = `
      // UPDATE markets SET is prose here
      /* DELETE FROM markets */
      q(\`UPDATE markets AS mk SET q = 1\`); q('insert into "limit_orders" (id) values (1)');
      q(\`SELECT 1 FROM markets\`); const url = 'http://x/update markets';
      const repo = ds.getRepository(Market); await repo.save(x);
      await m.delete(LimitOrder, { id: 1 }); await qb.insert().into(Market).values({}).execute();`;
    const found = scanWrites(src, tables, entities).map((w) => `${w.table}:${w.how}`);
    expect(found.sort()).toEqual(['limit_orders:INSERT INTO', 'limit_orders:manager delete', 'markets:UPDATE', 'markets:query builder insert', 'markets:repository save'].sort());
  });

  test('comments are blanked but line numbers kept', () => {
    expect(stripComments('a // x\n/* y\n z */b').split('\n')).toHaveLength(3);
    expect(entityTables(`@Entity('markets')\nexport class Market {}`).get('Market')).toBe('markets');
  });

  test('a planted violation in the fixture tree fails the check; the owner and its composed fragment pass', () => {
    const r = checkTree(join(__dirname, 'fixtures/tables'));
    const v = r.violations.map((x) => `${x.file}:${x.line} ${x.table} ${x.area}->${x.owner}`);
    expect(v).toEqual(['src/services/trading/trade.ts:6 markets trading->books', 'src/services/trading/trade.ts:8 limit_orders trading->books']);
  });
});

test('the real tree: every table is written only by its owner, and every entity table has one', () => {
  const r = checkTree(join(__dirname, '../..'));
  expect(r.unmapped).toEqual([]);
  expect(r.violations.map((v) => `${v.file}:${v.line} ${v.table}`)).toEqual([]);
  expect(r.writes).toBeGreaterThan(100);
});

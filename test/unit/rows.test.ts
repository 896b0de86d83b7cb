import { rowReader } from '../../src/db/rows';
import { Metric, MetricReading } from '../../src/entities/metric';
import { Workspace } from '../../src/entities/workspace';

describe('row types from the entities (db/rows)', () => {
  it('reads a raw snake_case row into the entity fields, with numbers, bigints and nulls as the entity types them', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const m = rowReader(Metric)({
      id: 'm1', workspace_id: 'w1', name: 'Revenue', description: '', value: 2, formula: '0', total: '3.5', formula_error: null,
      depth: '1', sort_order: 4, is_leaf: true, market_range_max: 1000, resets_every: null, opens_at: null,
      resolves_na_until_measured: false, time_preference: { enabled: true, halfLife: 1 }, liquidity_credits: '5000000000',
      market_title: null, settlement_lag_minutes: null, measured_at: null, created_at: at, updated_at: at, extra_join: 'ignored',
    });
    expect(m).toEqual({
      id: 'm1', workspaceId: 'w1', name: 'Revenue', description: '', value: 2, formula: '0', total: 3.5, formulaError: null,
      depth: 1, sortOrder: 4, isLeaf: true, marketRangeMax: 1000, resetsEvery: null, opensAt: null,
      resolvesNaUntilMeasured: false, timePreference: { enabled: true, halfLife: 1 }, liquidityCredits: 5_000_000_000n,
      marketTitle: null, settlementLagMinutes: null, measuredAt: null, lastMeasuredAt: null, unit: null, createdAt: at, updatedAt: at,
    });
    expect('workspace' in m).toBe(false);
  });
  it('a bigint key without a transformer stays text; a column the query left out reads as null', () => {
    const r = rowReader(MetricReading)({ id: 12, metric_id: 'm1', value: null });
    expect(r.id).toBe('12');
    expect(r.value).toBeNull();
    expect(r.note).toBeNull();
    expect(rowReader(Workspace)({ default_liquidity: '7' }).defaultLiquidity).toBe(7n);
  });
  it('refuses a class that is not an entity', () => {
    class NotAnEntity {
      x = 1;
    }
    expect(() => rowReader(NotAnEntity)).toThrow(/not an entity/);
  });
});

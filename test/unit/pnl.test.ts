import fc from 'fast-check';
import { marketPnl, rankByPnl } from '../../src/domain/pnl';

describe('marketPnl', () => {
  it('marks a live position at the consensus and at the metric', () => {
    expect(marketPnl({ netCost: 10n, mark: 14n, metricValue: 7n, open: true })).toEqual({
      open: true,
      netCash: -10n,
      markValueConsensus: 14n,
      metricPayoutValue: 7n,
      pnlConsensus: 4n,
      pnlMetric: -3n,
    });
  });
  it('has no metric P&L without a metric value', () => {
    expect(marketPnl({ netCost: 5n, mark: 0n, metricValue: null, open: false })).toMatchObject({ metricPayoutValue: null, pnlConsensus: -5n, pnlMetric: null });
  });
  it('a position that took cash out has a positive netCash', () => {
    expect(marketPnl({ netCost: -3n, mark: 0n, metricValue: 0n, open: false })).toMatchObject({ netCash: 3n, pnlConsensus: 3n, pnlMetric: 3n });
  });
  it('pnl = mark + netCash, whatever the numbers', () => {
    fc.assert(
      fc.property(fc.bigInt(), fc.bigInt(), fc.option(fc.bigInt(), { nil: null }), fc.boolean(), (netCost, mark, metricValue, open) => {
        const r = marketPnl({ netCost, mark, metricValue, open });
        expect(r.pnlConsensus).toBe(r.markValueConsensus + r.netCash);
        expect(r.pnlMetric).toBe(metricValue === null ? null : metricValue + r.netCash);
      }),
    );
  });
});

describe('rankByPnl', () => {
  it('puts open books first, then the largest |pnlConsensus|; ties keep their order', () => {
    const rows = [
      { id: 'a', open: false, pnlConsensus: 100n },
      { id: 'b', open: true, pnlConsensus: 1n },
      { id: 'c', open: true, pnlConsensus: -5n },
      { id: 'd', open: false, pnlConsensus: -100n },
      { id: 'e', open: true, pnlConsensus: 5n },
    ];
    expect(rankByPnl(rows).map((r) => r.id)).toEqual(['c', 'e', 'b', 'a', 'd']);
    expect(rows.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
  it('orders by magnitude beyond what floating point can tell apart', () => {
    const big = 2n ** 60n;
    expect(rankByPnl([{ open: true, pnlConsensus: big }, { open: true, pnlConsensus: -(big + 1n) }]).map((r) => r.pnlConsensus)).toEqual([-(big + 1n), big]);
  });
});

import fc from 'fast-check';
import { fitBatchCost } from '../../bench/batchCost';

describe('fitBatchCost', () => {
  it('finds the per-batch and per-trade costs that produced exact points', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 10, noNaN: true }),
        fc.double({ min: 0, max: 5, noNaN: true }),
        fc.uniqueArray(fc.double({ min: 1, max: 64, noNaN: true }), { minLength: 2, maxLength: 6, comparator: (a, b) => Math.abs(a - b) < 0.01 }),
        (perBatch, perTrade, batches) => {
          const fit = fitBatchCost(batches.map((batch) => ({ batch, cpuMsPerTrade: perTrade + perBatch / batch })));
          expect(fit.perBatch).toBeCloseTo(perBatch, 6);
          expect(fit.perTrade).toBeCloseTo(perTrade, 6);
        },
      ),
    );
  });

  it('splits the figures of a day measured on this machine', () => {
    // Server process, 8 clients over 100 markets, TRADE_BATCH_MAX 1, 2, 4 and 64 (docs/decisions-log.md, issue 29 step 17).
    const fit = fitBatchCost([
      { batch: 1, cpuMsPerTrade: 2.03 },
      { batch: 1.8, cpuMsPerTrade: 1.36 },
      { batch: 3.13, cpuMsPerTrade: 1.21 },
      { batch: 7.97, cpuMsPerTrade: 0.63 },
    ]);
    expect(fit.perBatch).toBeGreaterThan(1.3);
    expect(fit.perBatch).toBeLessThan(1.8);
    expect(fit.perTrade).toBeGreaterThan(0.4);
    expect(fit.perTrade).toBeLessThan(0.65);
  });

  it('refuses runs at one batch size only', () => {
    expect(() => fitBatchCost([{ batch: 8, cpuMsPerTrade: 1 }, { batch: 8, cpuMsPerTrade: 1.1 }])).toThrow(/two batch sizes/);
  });
});

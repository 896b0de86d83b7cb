/**
 * A batch's cost split in two: what each batch pays whatever its size (F, CPU-ms a batch: the queue's
 * hop, the transaction's round trips and commit, the notice) and what each trade adds (v, CPU-ms a
 * trade: its HTTP request and answer, its pricing, its rows). Measured as CPU a trade at several
 * batch sizes b, which is v + F / b: a least-squares line over 1/b. With the callers' requests all in
 * one serial batch (8 clients), a cycle costs about F + b·v of CPU, which is the figure a faster
 * trade path has to cut.
 */
export interface CostPoint {
  /** Mean trades a batch in the run. */
  batch: number;
  /** CPU-ms a trade in the run. */
  cpuMsPerTrade: number;
}

export interface BatchCost {
  perBatch: number;
  perTrade: number;
}

/** The least-squares fit of cpuMsPerTrade = perTrade + perBatch / batch (at least two distinct batch sizes). */
export function fitBatchCost(points: readonly CostPoint[]): BatchCost {
  const xs = points.map((p) => 1 / p.batch);
  const n = points.length;
  const mx = xs.reduce((a, x) => a + x, 0) / n;
  const my = points.reduce((a, p) => a + p.cpuMsPerTrade, 0) / n;
  let sxx = 0;
  let sxy = 0;
  points.forEach((p, i) => {
    sxx += (xs[i] - mx) ** 2;
    sxy += (xs[i] - mx) * (p.cpuMsPerTrade - my);
  });
  if (n < 2 || sxx === 0) throw new Error('fitBatchCost needs runs at two batch sizes at least');
  const perBatch = sxy / sxx;
  return { perBatch, perTrade: my - perBatch * mx };
}

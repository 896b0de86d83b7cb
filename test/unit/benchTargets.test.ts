import fc from 'fast-check';
import { bothEnds, judgeTargets, targetsTable, type Step, type TargetInput } from '../../bench/targets';

const step = (concurrency: number, hotTps: number, spreadTps: number, p50 = 3): Step => ({
  concurrency,
  hotTps,
  hotP50: p50,
  spreadTps,
  spreadP50: p50,
  hotDeadlocks: 0,
  spreadDeadlocks: 0,
});

const run = (over: Partial<TargetInput> = {}): TargetInput => ({
  steps: [step(1, 300, 300), step(8, 2100, 2500), step(16, 2200, 2600), step(64, 4100, 2700), step(256, 4200, 2800)],
  pgbench: { hot: 4000, simple: 7000 },
  halfRate: { hot: { p99: 20 }, spread: { p99: 25 } },
  cpuAtSaturation: 1.5,
  ...over,
});

const byName = (vs: ReturnType<typeof judgeTargets>, name: string) => {
  const v = vs.find((x) => x.name === name);
  if (!v) throw new Error(`no verdict "${name}"`);
  return v;
};

describe("bench/targets: issue 29's targets judged on a run", () => {
  it('a run meeting every target is judged met throughout', () => {
    const vs = judgeTargets(run());
    expect(vs.length).toBe(13);
    expect(vs.filter((v) => !v.met).map((v) => v.name)).toEqual([]);
  });

  it('a missed ratio reports how many times short it is', () => {
    const vs = judgeTargets(run({ steps: [step(1, 150, 150, 6), step(8, 500, 400), step(16, 600, 500), step(64, 1000, 450), step(256, 1100, 700)] }));
    const hot8 = byName(vs, '1 market, 8 clients / pgbench hot row');
    expect(hot8.met).toBe(false);
    expect(hot8.value).toBeCloseTo(0.125, 6);
    expect(hot8.gap).toBeCloseTo(4, 6);
    expect(byName(vs, 'p50 ms at one trader, 1 market').gap).toBeCloseTo(1.5, 6);
    // 64 clients slower than 16 on 100 markets: a collapse, flagged.
    expect(byName(vs, '100 markets, 64 clients / 16 clients').met).toBe(false);
    expect(byName(vs, '100 markets, 256 clients / 16 clients').met).toBe(true);
  });

  it('one deadlock anywhere fails the deadlock target; CPU over 2 ms fails its own', () => {
    const steps = run().steps.map((s, i) => (i === 3 ? { ...s, spreadDeadlocks: 1 } : s));
    const vs = judgeTargets(run({ steps, cpuAtSaturation: 3 }));
    expect(byName(vs, 'deadlocks, all steps')).toMatchObject({ value: 1, met: false });
    expect(byName(vs, 'server CPU-ms per trade at saturation')).toMatchObject({ value: 3, met: false, gap: 1.5 });
  });

  it('a step the run did not measure is left out, not judged met', () => {
    const vs = judgeTargets(run({ steps: [step(8, 2100, 2500)] }));
    expect(vs.map((v) => v.name)).not.toContain('1 market, 64 clients / pgbench hot row');
    expect(vs.map((v) => v.name)).not.toContain('p50 ms at one trader, 1 market');
  });

  it('with the lane alone measured, the throughput and one-trader verdicts say what the transaction alone reaches', () => {
    const vs = judgeTargets(run({ steps: [step(1, 150, 150, 8), step(8, 600, 550)], alone: { hot8: 920, hot64: 2200, spread8: 760, oneP50: 5 } }));
    // 920 trades/s alone against a 4,000 hot row: 0.23, 2.17x short of 0.5; the whole path (600) 3.33x.
    expect(byName(vs, '1 market, 8 clients / pgbench hot row').alone!.value).toBeCloseTo(0.23, 6);
    expect(byName(vs, '1 market, 8 clients / pgbench hot row').alone!.gap).toBeCloseTo(0.5 / 0.23, 6);
    expect(byName(vs, '100 markets, 8 clients / pgbench -N').alone!.value).toBeCloseTo(760 / 7000, 6);
    expect(byName(vs, 'p50 ms at one trader, 100 markets').alone).toEqual({ value: 5, gap: 1.25 });
    expect(byName(vs, 'p50 ms at one trader, 1 market').alone).toEqual({ value: 5, gap: 1.25 });
    const at64 = judgeTargets(run({ alone: { hot8: 920, hot64: 2200, spread8: 760, oneP50: 5 } }));
    expect(byName(at64, '1 market, 64 clients / pgbench hot row').alone!.value).toBeCloseTo(2200 / 4000, 6);
    // No lane figure for a target the transaction alone does not measure.
    expect(byName(vs, 'p99 ms at half the saturating rate, 1 market').alone).toBeUndefined();
    expect(byName(vs, 'server CPU-ms per trade at saturation').alone).toBeUndefined();
    // The table grows two columns, and a met lane figure shows no gap.
    const table = targetsTable(judgeTargets(run({ alone: { hot8: 2500, hot64: 5000, spread8: 2600, oneP50: 2 } }))).split('\n');
    expect(table[0]).toContain('| lane alone | its gap |');
    expect(table.find((l) => l.startsWith('| 1 market, 8 clients'))).toMatch(/\| 0\.625 \| - \|$/);
    expect(table.find((l) => l.startsWith('| deadlocks'))).toMatch(/\| \| \|$/);
    // Every row has the header's cells; a lane figure that misses shows its gap.
    for (const l of table) expect(l.split('|').length).toBe(table[0].split('|').length);
    const missed = targetsTable(judgeTargets(run({ alone: { hot8: 1000, hot64: 5000, spread8: 2600, oneP50: 2 } }))).split('\n');
    expect(missed.find((l) => l.startsWith('| 1 market, 8 clients'))).toMatch(/\| 0\.250 \| 2\.000 \|$/);
    expect(targetsTable(judgeTargets(run()))).not.toContain('lane alone');
  });

  it('met exactly when the gap is at most 1, for every figure', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 1e4, noNaN: true }), fc.double({ min: 0.01, max: 50, noNaN: true }), (tps, cpu) => {
        const vs = judgeTargets(run({ steps: [step(1, tps, tps), step(8, tps, tps)], cpuAtSaturation: cpu }));
        for (const v of vs) expect(v.met).toBe(v.gap <= 1);
      }),
    );
  });

  it('a reference measured at both ends of a run is judged by its mean, with the drift between the ends', () => {
    const { mean, drift } = bothEnds({ hot: 1000, simple: 2000 }, { hot: 1500, simple: 1000 });
    expect(mean).toEqual({ hot: 1250, simple: 1500 });
    expect(drift.hot).toBeCloseTo(0.5, 12);
    expect(drift.simple).toBeCloseTo(-0.5, 12);
    fc.assert(
      fc.property(fc.double({ min: 1, max: 1e5, noNaN: true }), fc.double({ min: 1, max: 1e5, noNaN: true }), (a, b) => {
        const r = bothEnds({ x: a }, { x: b });
        expect(r.mean.x).toBeGreaterThanOrEqual(Math.min(a, b) * (1 - 1e-12));
        expect(r.mean.x).toBeLessThanOrEqual(Math.max(a, b) * (1 + 1e-12));
        expect(a * (1 + r.drift.x)).toBeCloseTo(b, 6);
      }),
    );
  });
});

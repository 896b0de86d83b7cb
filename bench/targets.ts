/**
 * Issue 29's targets, judged on one bench:trades run (pure: figures in, verdicts out). Each verdict
 * says the figure, the target and the gap: how many times short of the target the figure is
 * (1 or less: met). "Done when" asks every gap below 1.5 where a target is not met.
 */

export interface Step {
  concurrency: number;
  hotTps: number;
  hotP50: number;
  spreadTps: number;
  spreadP50: number;
  hotDeadlocks: number;
  spreadDeadlocks: number;
}

export interface TargetInput {
  steps: Step[];
  pgbench: { hot: number; simple: number };
  halfRate: { hot: { p99: number }; spread: { p99: number } };
  /** Server CPU-ms per trade at saturation (all server processes, Postgres and Redis). */
  cpuAtSaturation: number;
  /**
   * The lane transaction alone (bench/laneAlone.ts, same run): trades/s of batches of 8 on one book,
   * 64 on one book and 8 over 8 books, and the p50 ms of a batch of one. Where given, each throughput
   * and one-trader verdict also says what the transaction alone reaches against the same target.
   */
  alone?: { hot8: number; hot64: number; spread8: number; oneP50: number };
}

export interface Verdict {
  name: string;
  value: number;
  target: number;
  /** 'min': the figure must reach the target; 'max': it must not exceed it. */
  kind: 'min' | 'max';
  /** Times short of the target (<= 1: met). */
  gap: number;
  met: boolean;
  /** The same figure for the lane transaction alone (no HTTP, no queue), and its gap: the part of `gap` the transaction itself sets. */
  alone?: { value: number; gap: number };
}

const gapOf = (value: number, target: number, kind: 'min' | 'max') =>
  kind === 'min' ? (value > 0 ? target / value : Infinity) : target > 0 ? value / target : value > 0 ? Infinity : 0;

function verdict(name: string, value: number, target: number, kind: 'min' | 'max', alone?: number): Verdict {
  const v: Verdict = { name, value, target, kind, gap: gapOf(value, target, kind), met: kind === 'min' ? value >= target : value <= target };
  if (alone !== undefined) v.alone = { value: alone, gap: gapOf(alone, target, kind) };
  return v;
}

/** The verdicts of one run; a step the run did not measure is left out (not judged as met). */
export function judgeTargets(r: TargetInput): Verdict[] {
  const at = (c: number) => r.steps.find((s) => s.concurrency === c);
  const out: Verdict[] = [];
  const s1 = at(1);
  const s8 = at(8);
  const s16 = at(16);
  const s64 = at(64);
  const a = r.alone;
  if (s8) out.push(verdict('1 market, 8 clients / pgbench hot row', s8.hotTps / r.pgbench.hot, 0.5, 'min', a && a.hot8 / r.pgbench.hot));
  if (s64) out.push(verdict('1 market, 64 clients / pgbench hot row', s64.hotTps / r.pgbench.hot, 1.0, 'min', a && a.hot64 / r.pgbench.hot));
  if (s8) out.push(verdict('100 markets, 8 clients / pgbench -N', s8.spreadTps / r.pgbench.simple, 0.35, 'min', a && a.spread8 / r.pgbench.simple));
  out.push(verdict('server CPU-ms per trade at saturation', r.cpuAtSaturation, 2.0, 'max'));
  if (s1) out.push(verdict('p50 ms at one trader, 1 market', s1.hotP50, 4, 'max', a?.oneP50));
  if (s1) out.push(verdict('p50 ms at one trader, 100 markets', s1.spreadP50, 4, 'max', a?.oneP50));
  out.push(verdict('p99 ms at half the saturating rate, 1 market', r.halfRate.hot.p99, 30, 'max'));
  out.push(verdict('p99 ms at half the saturating rate, 100 markets', r.halfRate.spread.p99, 30, 'max'));
  out.push(verdict('deadlocks, all steps', r.steps.reduce((n, s) => n + s.hotDeadlocks + s.spreadDeadlocks, 0), 0, 'max'));
  if (s16) {
    for (const c of [64, 256]) {
      const s = at(c);
      if (!s) continue;
      out.push(verdict(`1 market, ${c} clients / 16 clients`, s.hotTps / s16.hotTps, 1, 'min'));
      out.push(verdict(`100 markets, ${c} clients / 16 clients`, s.spreadTps / s16.spreadTps, 1, 'min'));
    }
  }
  return out;
}

/**
 * A markdown table of the verdicts; with the lane alone measured, two more columns: what the
 * transaction alone reaches and its gap (the gap around it is the quotient of the two gaps).
 */
export function targetsTable(vs: Verdict[]): string {
  const f = (n: number) => (Number.isFinite(n) ? (Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(3)) : 'inf');
  const gapText = (gap: number) => (gap <= 1 ? '-' : f(gap));
  const alone = vs.some((v) => v.alone);
  const more = (v: Verdict) => (!alone ? '' : v.alone ? ` ${f(v.alone.value)} | ${gapText(v.alone.gap)} |` : ' | |');
  return [
    `| target | figure | wanted | gap (x short) | met |${alone ? ' lane alone | its gap |' : ''}`,
    `|---|---|---|---|---|${alone ? '---|---|' : ''}`,
    ...vs.map((v) => `| ${v.name} | ${f(v.value)} | ${v.kind === 'min' ? '>=' : '<='} ${v.target} | ${v.met ? '-' : f(v.gap)} | ${v.met ? 'yes' : 'no'} |${more(v)}`),
  ].join('\n');
}

/**
 * A reference measured at both ends of a run (pgbench, the lane alone): the machine drifts over the
 * minutes between, so the run is judged against the mean of the two, and `drift` says how far the
 * second end moved from the first (after / before - 1).
 */
export function bothEnds<K extends string>(before: Record<K, number>, after: Record<K, number>): { mean: Record<K, number>; drift: Record<K, number> } {
  const keys = Object.keys(before) as K[];
  const mean = Object.fromEntries(keys.map((k) => [k, (before[k] + after[k]) / 2])) as Record<K, number>;
  const drift = Object.fromEntries(keys.map((k) => [k, before[k] > 0 ? after[k] / before[k] - 1 : NaN])) as Record<K, number>;
  return { mean, drift };
}

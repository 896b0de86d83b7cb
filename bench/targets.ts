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
}

function verdict(name: string, value: number, target: number, kind: 'min' | 'max'): Verdict {
  const gap = kind === 'min' ? (value > 0 ? target / value : Infinity) : target > 0 ? value / target : value > 0 ? Infinity : 0;
  return { name, value, target, kind, gap, met: kind === 'min' ? value >= target : value <= target };
}

/** The verdicts of one run; a step the run did not measure is left out (not judged as met). */
export function judgeTargets(r: TargetInput): Verdict[] {
  const at = (c: number) => r.steps.find((s) => s.concurrency === c);
  const out: Verdict[] = [];
  const s1 = at(1);
  const s8 = at(8);
  const s16 = at(16);
  const s64 = at(64);
  if (s8) out.push(verdict('1 market, 8 clients / pgbench hot row', s8.hotTps / r.pgbench.hot, 0.5, 'min'));
  if (s64) out.push(verdict('1 market, 64 clients / pgbench hot row', s64.hotTps / r.pgbench.hot, 1.0, 'min'));
  if (s8) out.push(verdict('100 markets, 8 clients / pgbench -N', s8.spreadTps / r.pgbench.simple, 0.35, 'min'));
  out.push(verdict('server CPU-ms per trade at saturation', r.cpuAtSaturation, 2.0, 'max'));
  if (s1) out.push(verdict('p50 ms at one trader, 1 market', s1.hotP50, 4, 'max'));
  if (s1) out.push(verdict('p50 ms at one trader, 100 markets', s1.spreadP50, 4, 'max'));
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

/** A markdown table of the verdicts. */
export function targetsTable(vs: Verdict[]): string {
  const f = (n: number) => (Number.isFinite(n) ? (Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(3)) : 'inf');
  return [
    '| target | figure | wanted | gap (x short) | met |',
    '|---|---|---|---|---|',
    ...vs.map((v) => `| ${v.name} | ${f(v.value)} | ${v.kind === 'min' ? '>=' : '<='} ${v.target} | ${v.met ? '-' : f(v.gap)} | ${v.met ? 'yes' : 'no'} |`),
  ].join('\n');
}

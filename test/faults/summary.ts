import type { CheckResult } from './checks';
import type { RequestRecord } from './client';
import type { Crash } from './cluster';
import type { FaultRunner } from './faults';

export interface Summary {
  mode: string;
  requests: number;
  acknowledged: number;
  refusedByCode: Record<string, number>;
  noDefiniteAnswer: number;
  retries: number;
  indefiniteSeen: Record<string, number>;
  decisions: string[];
  settles: string[];
  kills: { api: number; worker: number };
  redisRestarts: number;
  pgTerminations: number;
  pgBackendsTerminated: number;
  faultErrors: string[];
  crashes: Crash[];
  timeToDefiniteMs: { p50: number; p99: number; max: number };
  maxDefiniteAfterLastFaultMs: number;
  rows: CheckResult['counts'] | null;
  violations: Record<string, number>;
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export function summarize(mode: string, records: RequestRecord[], faults: FaultRunner, crashes: Crash[], checks: CheckResult | null): Summary {
  const trades = records.filter((r) => r.kind === 'trade' || r.kind === 'condensed');
  const refusedByCode: Record<string, number> = {};
  const indefiniteSeen: Record<string, number> = {};
  for (const r of records) for (const [k, n] of Object.entries(r.indefinite)) indefiniteSeen[k] = (indefiniteSeen[k] ?? 0) + n;
  for (const r of trades) if (r.status !== undefined && r.status >= 400) refusedByCode[r.code ?? String(r.status)] = (refusedByCode[r.code ?? String(r.status)] ?? 0) + 1;
  const latencies = trades.filter((r) => r.definiteAt !== undefined).map((r) => r.definiteAt! - r.firstSentAt).sort((a, b) => a - b);
  const last = faults.lastFaultAt;
  const outstanding = records.filter((r) => r.definiteAt !== undefined && r.firstSentAt <= last);
  const describe = (kind: string) =>
    records.filter((r) => r.kind === kind).map((r) => `${r.path.split('/').slice(-2).join('/')} -> ${r.status ?? 'none'}${r.code ? ` ${r.code}` : ''} (${r.attempts} attempts)`);
  return {
    mode,
    requests: trades.length,
    acknowledged: trades.filter((r) => r.status === 200).length,
    refusedByCode,
    noDefiniteAnswer: trades.filter((r) => r.definiteAt === undefined).length,
    retries: records.reduce((s, r) => s + r.attempts - 1, 0),
    indefiniteSeen,
    decisions: describe('decision'),
    settles: describe('settle'),
    kills: { api: faults.count('kill-api'), worker: faults.count('kill-worker') },
    redisRestarts: faults.count('restart-redis'),
    pgTerminations: faults.count('terminate-pg'),
    pgBackendsTerminated: faults.events.filter((e) => e.kind === 'terminate-pg').reduce((s, e) => s + Number.parseInt(e.detail ?? '0', 10), 0),
    faultErrors: faults.events.filter((e) => e.error).map((e) => `${e.kind}: ${e.error}`),
    crashes,
    timeToDefiniteMs: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1) ?? 0 },
    maxDefiniteAfterLastFaultMs: last ? Math.max(0, ...outstanding.map((r) => r.definiteAt! - last)) : 0,
    rows: checks?.counts ?? null,
    violations: checks?.violations.counts ?? {},
  };
}

export function formatSummary(s: Summary, examples: Record<string, string[]>): string {
  const lines = [
    `===== fault harness, mode ${s.mode} =====`,
    `trade requests: ${s.requests}   acknowledged (200): ${s.acknowledged}   no definite answer: ${s.noDefiniteAnswer}   retries (all requests): ${s.retries}`,
    `refused by code: ${JSON.stringify(s.refusedByCode)}`,
    `indefinite answers seen: ${JSON.stringify(s.indefiniteSeen)}`,
    `decisions: ${s.decisions.join('; ') || '-'}`,
    `settles: ${s.settles.join('; ') || '-'}`,
    `faults: worker kills ${s.kills.worker}, API kills ${s.kills.api}, Redis restarts ${s.redisRestarts}, PG terminations ${s.pgTerminations} (${s.pgBackendsTerminated} backends)`,
    `fault errors: ${s.faultErrors.join('; ') || '-'}   unexpected process exits: ${s.crashes.map((c) => `${c.name} code=${c.code} signal=${c.signal}`).join('; ') || '-'}`,
    `time to definite answer (trades): p50 ${s.timeToDefiniteMs.p50} ms, p99 ${s.timeToDefiniteMs.p99} ms, max ${s.timeToDefiniteMs.max} ms; latest definite answer after the last fault: ${s.maxDefiniteAfterLastFaultMs} ms`,
    `database: ${s.rows ? `${s.rows.trades} applied trades, ${s.rows.redeems} redeem rows, ${s.rows.requestRows} request rows, ${s.rows.markets} markets` : 'not checked'}`,
    `violations: ${Object.keys(s.violations).length ? JSON.stringify(s.violations) : 'none'}`,
  ];
  for (const [k, xs] of Object.entries(examples)) lines.push(`  ${k}:`, ...xs.map((x) => `    - ${x}`));
  return lines.join('\n');
}

import { laneOf } from '../../jobs/hub';
import type { CheckResult } from './checks';
import type { RequestRecord } from './client';
import type { Crash } from './cluster';
import type { FaultEvent, FaultRunner } from './faults';

/** Per Redis restart: how long after Redis answered again each lane answered a trade (200) again. */
export interface RedisRecovery {
  /** Seconds into the fault window at which Redis answered again. */
  atSeconds: number;
  /** ms from Redis answering to the lane's first 200 answer; null: none before the load ended. */
  lanes: Record<string, number | null>;
  /** The slowest lane (null when one never answered). */
  allLanesMs: number | null;
  /** The next fault's start, ms after Redis answered (a recovery longer than this is partly that fault's). */
  nextFaultMs: number | null;
}

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
  redisRecovery: RedisRecovery[];
  rows: CheckResult['counts'] | null;
  violations: Record<string, number>;
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * The lanes under load when Redis came back (a trade in flight then or sent within 5 s after), and
 * for each the first trade answered 200 after it: the time the lane took to answer again.
 */
function redisRecoveries(trades: RequestRecord[], events: FaultEvent[], lanes: number): RedisRecovery[] {
  const start = Math.min(...events.map((e) => e.startedAt));
  return events
    .filter((e) => e.kind === 'restart-redis' && !e.error)
    .map((e) => {
      const back = e.doneAt;
      const next = events.filter((x) => x.startedAt >= back).map((x) => x.startedAt - back);
      const answered = new Map<number, number | null>();
      for (const r of trades) {
        if (!r.marketId) continue;
        const lane = laneOf(r.marketId, lanes);
        const loaded = r.firstSentAt <= back + 5000 && (r.definiteAt === undefined || r.definiteAt >= back);
        if (loaded && !answered.has(lane)) answered.set(lane, null);
        if (r.status === 200 && r.definiteAt !== undefined && r.definiteAt >= back) {
          const ms = r.definiteAt - back;
          const prev = answered.get(lane);
          if (prev === undefined || prev === null || ms < prev) answered.set(lane, ms);
        }
      }
      const sorted = [...answered.entries()].sort(([a], [b]) => a - b);
      const ms = sorted.map(([, v]) => v);
      return {
        atSeconds: Math.round((back - start) / 100) / 10,
        lanes: Object.fromEntries(sorted.map(([k, v]) => [`lane${k}`, v])),
        allLanesMs: ms.includes(null) ? null : Math.max(0, ...(ms as number[])),
        nextFaultMs: next.length ? Math.min(...next) : null,
      };
    });
}

export function summarize(mode: string, records: RequestRecord[], faults: FaultRunner, crashes: Crash[], checks: CheckResult | null, lanes: number): Summary {
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
    redisRecovery: redisRecoveries(trades, faults.events, lanes),
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
    ...s.redisRecovery.map(
      (r) =>
        `Redis back at +${r.atSeconds} s: every lane answered a trade again within ${r.allLanesMs ?? 'never'} ms (${Object.entries(r.lanes).map(([k, v]) => `${k} ${v ?? 'never'}`).join(', ')}; next fault ${r.nextFaultMs ?? '-'} ms after)`,
    ),
    `database: ${s.rows ? `${s.rows.trades} applied trades, ${s.rows.redeems} redeem rows, ${s.rows.requestRows} request rows, ${s.rows.markets} markets` : 'not checked'}`,
    `violations: ${Object.keys(s.violations).length ? JSON.stringify(s.violations) : 'none'}`,
  ];
  for (const [k, xs] of Object.entries(examples)) lines.push(`  ${k}:`, ...xs.map((x) => `    - ${x}`));
  return lines.join('\n');
}

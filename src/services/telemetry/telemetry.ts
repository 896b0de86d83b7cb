import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { DomainError } from '../../errors';
import { rowReader, type Row } from '../../db/rows';
import { AgentHeartbeat, DecisionTrace } from '../../entities/telemetry';
import { rows } from '../../db/queryRows';

export const HEARTBEAT_STATUSES = ['ok', 'idle', 'degraded', 'error', 'stopped'] as const;
export type HeartbeatStatus = (typeof HEARTBEAT_STATUSES)[number];
export const DECISION_OUTCOMES = ['trade', 'skip', 'error'] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];
export const MAX_REASONING = 500;

/** A heartbeat row (the entity's columns) with its agent's nickname. */
export type HeartbeatRow = Row<AgentHeartbeat> & { nickname: string | null };
/** A decision row with its agent's nickname and its book's metric name and date (joined; null once the book is gone). */
export type DecisionRow = Row<DecisionTrace> & { nickname: string | null; metricName: string | null; targetDate: string | null };

export interface AgentTelemetryStatus {
  agentId: string;
  nickname: string | null;
  last: HeartbeatRow;
  /** No heartbeat since the agent's own nextCycleAt. */
  silent: boolean;
  /** How long past its nextCycleAt (ms), when silent. */
  overdueMs: number | null;
}

type Raw = Record<string, unknown>;
const readHeartbeat = rowReader(AgentHeartbeat);
const readDecision = rowReader(DecisionTrace);
const nicknameOf = (r: Raw) => (r.nickname as string | null) ?? null;

const toHeartbeat = (r: Raw): HeartbeatRow => ({ ...readHeartbeat(r), nickname: nicknameOf(r) });

const toDecision = (r: Raw): DecisionRow => ({
  ...readDecision(r),
  nickname: nicknameOf(r),
  metricName: (r.metric_name as string | null) ?? null,
  targetDate: (r.target_date as string | null) ?? null,
});

/** One heartbeat of the calling agent in a workspace. */
export async function recordHeartbeat(
  deps: Pick<Deps, 'ds' | 'clock'>,
  input: {
    workspaceId: string;
    agentId: string;
    status: HeartbeatStatus;
    lastCycleAt: Date | null;
    nextCycleAt: Date | null;
    lastCycleOutcome: string | null;
    balance: bigint | null;
  },
): Promise<HeartbeatRow> {
  const rows: Raw[] = await deps.ds.query(
    `WITH ins AS (
       INSERT INTO agent_heartbeats (workspace_id, agent_id, status, last_cycle_at, next_cycle_at, last_cycle_outcome, balance, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *)
     SELECT ins.*, a.nickname FROM ins JOIN agents a ON a.id = ins.agent_id`,
    [input.workspaceId, input.agentId, input.status, input.lastCycleAt, input.nextCycleAt, input.lastCycleOutcome, input.balance?.toString() ?? null, deps.clock.now()],
  );
  return toHeartbeat(rows[0]);
}

/**
 * Decision traces of the calling agent, all or none: every market must be a book of the workspace,
 * and a tradeId must name one of the caller's own trades on that market.
 */
export async function recordDecisions(
  deps: Pick<Deps, 'ds' | 'clock'>,
  input: { workspaceId: string; agentId: string; decisions: Array<{ marketId: string; outcome: DecisionOutcome; reasoning: string; tradeId: string | null }> },
): Promise<DecisionRow[]> {
  return inTransaction(deps.ds, async (m) => {
    const marketIds = [...new Set(input.decisions.map((d) => d.marketId))];
    const found: Raw[] = await m.query(`SELECT id FROM markets WHERE workspace_id = $1 AND id = ANY($2::uuid[])`, [input.workspaceId, marketIds]);
    const known = new Set(found.map((r) => String(r.id)));
    const missing = marketIds.filter((id) => !known.has(id));
    if (missing.length) throw new DomainError('market_not_found', `No market ${missing[0]} in this workspace; a decision trace names a book of the workspace.`, { marketIds: missing });
    const linked = input.decisions.filter((d) => d.tradeId);
    if (linked.length) {
      const trades: Raw[] = await m.query(`SELECT id, market_id FROM trades WHERE agent_id = $1 AND workspace_id = $2 AND id = ANY($3::uuid[])`, [
        input.agentId,
        input.workspaceId,
        linked.map((d) => d.tradeId),
      ]);
      const owned = new Map(trades.map((t) => [String(t.id), String(t.market_id)]));
      for (const d of linked) {
        if (owned.get(d.tradeId!) !== d.marketId) {
          throw new DomainError('validation_failed', `tradeId ${d.tradeId} is not one of your trades on market ${d.marketId}.`, { tradeId: d.tradeId, marketId: d.marketId });
        }
      }
    }
    const rows: Raw[] = await m.query(
      `WITH ins AS (
         INSERT INTO decision_traces (workspace_id, agent_id, market_id, outcome, reasoning, trade_id, created_at)
         SELECT $1, $2, x.market_id, x.outcome, x.reasoning, x.trade_id, $3
           FROM unnest($4::uuid[], $5::text[], $6::text[], $7::uuid[]) WITH ORDINALITY AS x(market_id, outcome, reasoning, trade_id, n)
          ORDER BY x.n
         RETURNING *)
       SELECT ins.*, a.nickname, mt.name AS metric_name, mk.target_date
         FROM ins JOIN agents a ON a.id = ins.agent_id
         LEFT JOIN markets mk ON mk.id = ins.market_id LEFT JOIN metrics mt ON mt.id = mk.metric_id
        ORDER BY ins.id`,
      [
        input.workspaceId,
        input.agentId,
        deps.clock.now(),
        input.decisions.map((d) => d.marketId),
        input.decisions.map((d) => d.outcome),
        input.decisions.map((d) => d.reasoning),
        input.decisions.map((d) => d.tradeId),
      ],
    );
    return rows.map(toDecision);
  });
}

/** An agent's heartbeats in the workspace, newest first; `before` is the id of the previous page's last row. */
export async function heartbeatsOf(deps: Pick<Deps, 'ds'>, q: { workspaceId: string; agentId: string; limit: number; before?: string }): Promise<HeartbeatRow[]> {
  const rows: Raw[] = await deps.ds.query(
    `SELECT h.*, a.nickname FROM agent_heartbeats h JOIN agents a ON a.id = h.agent_id
      WHERE h.workspace_id = $1 AND h.agent_id = $2 AND ($4::bigint IS NULL OR h.id < $4::bigint)
      ORDER BY h.id DESC LIMIT $3`,
    [q.workspaceId, q.agentId, q.limit, q.before ?? null],
  );
  return rows.map(toHeartbeat);
}

/** Decision traces in the workspace (one agent's, or everyone's), newest first. */
export async function decisionsOf(
  deps: Pick<Deps, 'ds'>,
  q: { workspaceId: string; agentId?: string; marketId?: string; outcome?: DecisionOutcome; limit: number; before?: string },
): Promise<DecisionRow[]> {
  const rows: Raw[] = await deps.ds.query(
    `SELECT d.*, a.nickname, mt.name AS metric_name, mk.target_date
       FROM decision_traces d JOIN agents a ON a.id = d.agent_id
       LEFT JOIN markets mk ON mk.id = d.market_id LEFT JOIN metrics mt ON mt.id = mk.metric_id
      WHERE d.workspace_id = $1 AND ($2::text IS NULL OR d.agent_id = $2) AND ($3::uuid IS NULL OR d.market_id = $3)
        AND ($4::text IS NULL OR d.outcome = $4) AND ($6::bigint IS NULL OR d.id < $6::bigint)
      ORDER BY d.id DESC LIMIT $5`,
    [q.workspaceId, q.agentId ?? null, q.marketId ?? null, q.outcome ?? null, q.limit, q.before ?? null],
  );
  return rows.map(toDecision);
}

/**
 * Each agent's latest heartbeat in the workspace, and whether it has gone silent (no heartbeat since
 * its own nextCycleAt). `silentOnly` keeps the silent ones, longest overdue first.
 */
export async function agentTelemetry(deps: Pick<Deps, 'ds' | 'clock'>, q: { workspaceId: string; silentOnly: boolean }): Promise<AgentTelemetryStatus[]> {
  const now = deps.clock.now();
  const rows: Raw[] = await deps.ds.query(
    `SELECT DISTINCT ON (h.agent_id) h.*, a.nickname
       FROM agent_heartbeats h JOIN agents a ON a.id = h.agent_id
      WHERE h.workspace_id = $1
      ORDER BY h.agent_id, h.id DESC`,
    [q.workspaceId],
  );
  const out = rows.map(toHeartbeat).map((last) => {
    const silent = last.nextCycleAt !== null && last.nextCycleAt.getTime() < now.getTime();
    return { agentId: last.agentId, nickname: last.nickname, last, silent, overdueMs: silent ? now.getTime() - last.nextCycleAt!.getTime() : null };
  });
  const kept = q.silentOnly ? out.filter((s) => s.silent) : out;
  return kept.sort((a, b) => (b.overdueMs ?? -1) - (a.overdueMs ?? -1) || b.last.receivedAt.getTime() - a.last.receivedAt.getTime());
}

/**
 * Telemetry past the retention: decision traces, and heartbeats except each agent's latest in a
 * workspace (the silent view needs it). In chunks, so a large purge holds no long lock.
 */
export async function purgeTelemetry(deps: Pick<Deps, 'ds' | 'clock'>, retentionDays: number): Promise<{ heartbeats: number; decisions: number }> {
  const cutoff = new Date(deps.clock.now().getTime() - retentionDays * 86_400_000);
  const chunk = 5000;
  let heartbeats = 0;
  let decisions = 0;
  for (;;) {
    const [{ n }] = await rows<{ n: number }>(
      deps.ds,
      `WITH d AS (DELETE FROM agent_heartbeats WHERE id IN (
         SELECT h.id FROM agent_heartbeats h WHERE h.received_at < $1
            AND EXISTS (SELECT 1 FROM agent_heartbeats n WHERE n.workspace_id = h.workspace_id AND n.agent_id = h.agent_id AND n.id > h.id)
          LIMIT ${chunk}) RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [cutoff],
    );
    heartbeats += n;
    if (n < chunk) break;
  }
  for (;;) {
    const [{ n }] = await rows<{ n: number }>(
      deps.ds,
      `WITH d AS (DELETE FROM decision_traces WHERE id IN (SELECT id FROM decision_traces WHERE created_at < $1 LIMIT ${chunk}) RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [cutoff],
    );
    decisions += n;
    if (n < chunk) break;
  }
  return { heartbeats, decisions };
}

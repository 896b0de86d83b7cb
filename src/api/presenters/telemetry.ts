import { toCredits } from '../../domain/money';
import type { AgentTelemetryStatus, DecisionRow, HeartbeatRow } from '../../services/telemetry';

export function presentHeartbeat(r: HeartbeatRow) {
  return {
    id: r.id,
    agentId: r.agentId,
    nickname: r.nickname,
    status: r.status,
    lastCycleAt: r.lastCycleAt?.toISOString() ?? null,
    nextCycleAt: r.nextCycleAt?.toISOString() ?? null,
    lastCycleOutcome: r.lastCycleOutcome,
    balance: r.balance === null ? null : toCredits(r.balance),
    receivedAt: r.receivedAt.toISOString(),
  };
}

export function presentDecision(r: DecisionRow) {
  return {
    id: r.id,
    agentId: r.agentId,
    nickname: r.nickname,
    marketId: r.marketId,
    metricName: r.metricName,
    targetDate: r.targetDate,
    outcome: r.outcome,
    reasoning: r.reasoning,
    tradeId: r.tradeId,
    createdAt: r.createdAt.toISOString(),
  };
}

export function presentAgentTelemetry(s: AgentTelemetryStatus) {
  return {
    agentId: s.agentId,
    nickname: s.nickname,
    silent: s.silent,
    overdueSeconds: s.overdueMs === null ? null : Math.floor(s.overdueMs / 1000),
    lastHeartbeat: presentHeartbeat(s.last),
  };
}

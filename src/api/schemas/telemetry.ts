import { z } from 'zod';
import { DECISION_OUTCOMES, HEARTBEAT_STATUSES } from '../../services/telemetry';
import { creditAmount, instant, nullableInstant } from './output';

/** presentHeartbeat (presenters/telemetry.ts). */
export const heartbeatSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  nickname: z.string().nullable(),
  status: z.enum(HEARTBEAT_STATUSES),
  lastCycleAt: nullableInstant,
  nextCycleAt: nullableInstant,
  lastCycleOutcome: z.string().nullable(),
  balance: creditAmount.nullable().describe('The balance the agent reported (credits), not the ledger’s.'),
  receivedAt: instant,
});

export const decisionSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  nickname: z.string().nullable(),
  marketId: z.string(),
  metricName: z.string().nullable(),
  targetDate: z.string().nullable(),
  outcome: z.enum(DECISION_OUTCOMES),
  reasoning: z.string(),
  tradeId: z.string().nullable(),
  createdAt: instant,
});

export const agentTelemetrySchema = z.object({
  agentId: z.string(),
  nickname: z.string().nullable(),
  silent: z.boolean().describe('No heartbeat since the agent’s own nextCycleAt.'),
  overdueSeconds: z.number().nullable().describe('How long past nextCycleAt, when silent.'),
  lastHeartbeat: heartbeatSchema,
});

import { rules } from './rule';

/** Telemetry: traders report, managers read. */

/** POST /telemetry/heartbeat */
export const heartbeat = rules.trade();
/** POST /telemetry/decisions */
export const reportDecisions = rules.trade();
/** GET /telemetry/agents */
export const listAgents = rules.manage();
/** GET /telemetry/silent */
export const readSilent = rules.manage();
/** GET /telemetry/agents/:agentId/heartbeats */
export const readHeartbeats = rules.manage();
/** GET /telemetry/agents/:agentId/decisions */
export const readDecisions = rules.manage();
/** GET /telemetry/decisions */
export const listDecisions = rules.manage();

import type { EntityManager } from 'typeorm';
import { withCredits } from '../../domain/money';

/** Every event type the service emits: the outbox accepts no other. */
export const EVENT_TYPES = [
  'market:created',
  'market:resolved',
  'market:closed',
  'metric:updated',
  'trade:executed',
  'proposal:created',
  'proposal:subsidy_skipped',
  'proposal:status_changed',
  // A comment or reply on a proposal (not in spec §6: the notification switches about comments need it).
  'proposal:commented',
  // To one participant (the hook's owner): its endpoint was disabled.
  'endpoint:disabled',
  // Limit orders (issue 14).
  'order:placed',
  'order:filled',
  'order:cancelled',
  'order:expired',
  // An unfunded book funded after it opened (issue 28).
  'market:funded',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** One outbox row: the workspace's stream (null: the platform's), its type and its JSON data (bigint values are nano-units, written as credits). */
export interface PendingEvent {
  workspaceId: string | null;
  type: EventType;
  data: Record<string, unknown>;
  /** Only this participant sees the event (its feed, stream and hooks); absent: every reader of the workspace. */
  agentId?: string | null;
}

/**
 * The one INSERT INTO outbox, rows in the order given (the relay publishes in id order): one event
 * as plain parameters (the trade's, on the hot path), several as arrays. The data of several go as
 * ONE JSON array, split by json_array_elements: no array literal to escape on this side, and the
 * column is `json` (stored as the text it is given), not `jsonb`, whose input parses every number
 * as a numeric (issue 29 step 16: about 2.4x json's cost a row).
 */
function insertSql(count: number, firstParam: number, when?: string, recipients = false): string {
  const [w, t, d, a] = [0, 1, 2, 3].map((i) => `$${firstParam + i}`);
  const source = recipients
    ? count === 1
      ? `(SELECT ${w}::uuid, ${t}::text, ${d}::json, ${a}::text) AS x(w, t, d, a)`
      : `ROWS FROM (unnest(${w}::uuid[]), unnest(${t}::text[]), json_array_elements(${d}::json), unnest(${a}::text[])) AS x(w, t, d, a)`
    : count === 1
      ? `(SELECT ${w}::uuid, ${t}::text, ${d}::json) AS x(w, t, d)`
      : `ROWS FROM (unnest(${w}::uuid[]), unnest(${t}::text[]), json_array_elements(${d}::json)) AS x(w, t, d)`;
  const cols = recipients ? 'workspace_id, type, data, agent_id' : 'workspace_id, type, data';
  const vals = recipients ? 'x.w, x.t, x.d, x.a' : 'x.w, x.t, x.d';
  return `INSERT INTO outbox (${cols}) SELECT ${vals} FROM ${source}${when ? ` WHERE ${when}` : ''}`;
}

const hasRecipients = (events: readonly PendingEvent[]) => events.some((e) => e.agentId);

/** The events' columns as insertSql's arrays take them: workspaces, types, the data as one JSON array, and (with recipients) the agents. */
function arrayColumns(events: readonly PendingEvent[], recipients: boolean): unknown[] {
  const cols: unknown[] = [events.map((e) => e.workspaceId), events.map((e) => e.type), JSON.stringify(events.map((e) => withCredits(e.data)))];
  if (recipients) cols.push(events.map((e) => e.agentId ?? null));
  return cols;
}

/** insertSql's parameters: arrayColumns, or one event's values as they are. */
function columnsOf(events: readonly PendingEvent[], recipients: boolean): unknown[] {
  if (events.length !== 1) return arrayColumns(events, recipients);
  const [e] = events;
  return [e.workspaceId, e.type, JSON.stringify(withCredits(e.data)), ...(recipients ? [e.agentId ?? null] : [])];
}

/**
 * The outbox write as a CTE named `outbox_rows` (parameters numbered from `firstParam`) for a caller
 * composing its own single statement, written only when `when` (an SQL boolean) holds: a trade
 * batch gates its events on its ledger write. Any number of events (none included), always as
 * arrays: the statement's text is the same whatever the events, so it can be prepared.
 */
export function outboxFragment(events: readonly PendingEvent[], firstParam: number, when?: string): { cte: string; params: unknown[] } {
  return { cte: `outbox_rows AS (${insertSql(2, firstParam, when, true)})`, params: arrayColumns(events, true) };
}

/** Write events in the caller's transaction, in one statement whatever their number; the sequencer logs them after commit. */
export async function writeEvents(m: EntityManager, events: readonly PendingEvent[]): Promise<void> {
  if (!events.length) return;
  const recipients = hasRecipients(events);
  await m.query(insertSql(events.length, 1, undefined, recipients), columnsOf(events, recipients));
}

/** One event (see `writeEvents`). */
export async function emitEvent(m: EntityManager, workspaceId: string | null, type: EventType, data: Record<string, unknown>, agentId?: string | null): Promise<void> {
  await writeEvents(m, [{ workspaceId, type, data, agentId }]);
}

import type { EntityManager } from 'typeorm';

export type EventType =
  | 'market:created'
  | 'market:resolved'
  | 'market:closed'
  | 'metric:updated'
  | 'trade:executed'
  | 'proposal:created'
  | 'proposal:subsidy_skipped'
  | 'proposal:status_changed';

/** Write an event in the caller's transaction; the relay publishes it after commit. */
export async function emitEvent(m: EntityManager, workspaceId: string | null, type: EventType, data: Record<string, unknown>): Promise<void> {
  await m.query(`INSERT INTO outbox (workspace_id, type, data) VALUES ($1, $2, $3)`, [workspaceId, type, JSON.stringify(data)]);
}

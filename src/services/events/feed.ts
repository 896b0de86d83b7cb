import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';

/** One entry of the log as readers see it; `id` increases within a workspace (and across them). */
export interface FeedEvent {
  id: string;
  type: string;
  workspaceId: string | null;
  data: Record<string, unknown>;
  timestamp: Date;
}

/** Whose events a reader sees: some workspaces (or all, for the platform operator), and events addressed to it. */
export interface FeedScope {
  workspaceIds: string[] | 'all';
  agentId: string | null;
}

/**
 * The scope of a feed or stream reader: the one workspace it named (the route has checked read
 * there), else every workspace it belongs to or owns; the master key reads everything.
 */
export async function feedScopeOf(deps: Deps, caller: Principal | null, named: string | null): Promise<FeedScope> {
  if (named) return { workspaceIds: [named], agentId: caller?.agentId ?? null };
  if (!caller) return { workspaceIds: [], agentId: null };
  if (caller.isMaster) return { workspaceIds: 'all', agentId: null };
  const rows: Array<{ id: string }> = await deps.ds.query(
    `SELECT workspace_id AS id FROM memberships WHERE agent_id = $1 UNION SELECT id FROM workspaces WHERE owner_id = $1`,
    [caller.agentId],
  );
  const ids = rows.map((r) => r.id);
  if (caller.keyLocked) return { workspaceIds: ids.filter((id) => id === caller.keyWorkspaceId), agentId: caller.agentId };
  return { workspaceIds: ids, agentId: caller.agentId };
}

/** Events after `after` (exclusive) in log order, at most `limit`. */
export async function readFeed(deps: Deps, scope: FeedScope, opts: { after: string; types?: string[]; limit: number }): Promise<FeedEvent[]> {
  if (scope.workspaceIds !== 'all' && !scope.workspaceIds.length) return [];
  const all = scope.workspaceIds === 'all';
  const rows: Array<{ seq: string; type: string; workspace_id: string | null; data: Record<string, unknown>; created_at: Date }> = await deps.ds.query(
    `SELECT seq::text AS seq, type, workspace_id, data, created_at FROM outbox
      WHERE seq > $1 AND ($2 OR workspace_id = ANY($3::uuid[])) AND (agent_id IS NULL OR $2 OR agent_id = $4)
        AND ($5::text[] IS NULL OR type = ANY($5::text[]))
      ORDER BY outbox.seq LIMIT $6`,
    [opts.after, all, all ? [] : scope.workspaceIds, scope.agentId, opts.types?.length ? opts.types : null, opts.limit],
  );
  return rows.map((r) => ({ id: r.seq, type: r.type, workspaceId: r.workspace_id, data: r.data, timestamp: r.created_at }));
}

/** The newest seq in the log (a stream without Last-Event-ID starts here). */
export async function logHead(deps: Deps): Promise<string> {
  const [r] = await deps.ds.query(`SELECT last_seq::text AS head FROM event_sequencer WHERE id = 1`);
  return r?.head ?? '0';
}

import { firstRow, rows } from '../../db/queryRows';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { readPoliciesIn, visibleEvents, type ReadPolicy } from '../access';

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
  /** What the reader may read in each workspace (services/access policy); null: everything (the operator). */
  policies?: ReadonlyMap<string, ReadPolicy> | null;
}

/**
 * The scope of a feed or stream reader: the one workspace it named (the route has checked read
 * there), else every workspace it belongs to or owns; the master key reads everything.
 */
export async function feedScopeOf(deps: Deps, caller: Principal | null, named: string | null, viewLink = false): Promise<FeedScope> {
  if (caller?.isMaster) return named ? { workspaceIds: [named], agentId: caller.agentId, policies: null } : { workspaceIds: 'all', agentId: null, policies: null };
  let ids: string[];
  if (named) ids = [named];
  else if (!caller) return { workspaceIds: [], agentId: null };
  else {
    const rows: Array<{ id: string }> = await deps.ds.query(
      `SELECT workspace_id AS id FROM memberships WHERE agent_id = $1 UNION SELECT id FROM workspaces WHERE owner_id = $1`,
      [caller.agentId],
    );
    ids = rows.map((r) => r.id);
    if (caller.keyLocked) ids = ids.filter((id) => id === caller.keyWorkspaceId);
  }
  const wss = ids.length
    ? await rows<{ id: string; public: boolean; owner_id: string | null }>(deps.ds, `SELECT id, public, owner_id FROM workspaces WHERE id = ANY($1::uuid[])`, [ids])
    : [];
  const policies = await readPoliciesIn(deps, caller, wss.map((w) => ({ id: w.id, public: w.public, ownerId: w.owner_id })), viewLink);
  return { workspaceIds: ids, agentId: caller?.agentId ?? null, policies };
}

/**
 * Events after `after` (exclusive) in log order, at most `limit`, leaving out what the reader may
 * not read (scope.policies); `through` is the last seq looked at, the cursor to go on from.
 */
/** An outbox row as the feed reads it (seq cast to text: an int8). */
interface OutboxEntry {
  seq: string;
  type: string;
  workspace_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

export async function readFeedPage(deps: Deps, scope: FeedScope, opts: { after: string; types?: string[]; limit: number }): Promise<{ events: FeedEvent[]; through: string }> {
  if (scope.workspaceIds !== 'all' && !scope.workspaceIds.length) return { events: [], through: opts.after };
  const all = scope.workspaceIds === 'all';
  const out: FeedEvent[] = [];
  let through = opts.after;
  for (;;) {
    const want = opts.limit - out.length;
    const types = opts.types?.length ? opts.types : null;
    const found = all
      ? await rows<OutboxEntry>(
          deps.ds,
          `SELECT seq::text AS seq, type, workspace_id, data, created_at FROM outbox
            WHERE seq > $1 AND ($2::text[] IS NULL OR type = ANY($2::text[]))
            ORDER BY outbox.seq LIMIT $3`,
          [through, types, want],
        )
      : // Per workspace from its own index range (outbox_workspace_seq), then merged: a reader's cost is
        // its workspaces times the page, never the log (a filter on the whole log from the cursor read
        // every later event of every workspace: 100,000 rows for an empty page in bench/scale, issue 60).
        await rows<OutboxEntry>(
          deps.ds,
          `SELECT e.seq::text AS seq, e.type, e.workspace_id, e.data, e.created_at
             FROM unnest($1::uuid[]) AS w(id)
             CROSS JOIN LATERAL (
               SELECT o.seq, o.type, o.workspace_id, o.data, o.created_at FROM outbox o
                WHERE o.workspace_id = w.id AND o.seq IS NOT NULL AND o.seq > $2 AND (o.agent_id IS NULL OR o.agent_id = $3)
                  AND ($4::text[] IS NULL OR o.type = ANY($4::text[]))
                ORDER BY o.seq LIMIT $5) e
            ORDER BY e.seq LIMIT $5`,
          [scope.workspaceIds, through, scope.agentId, types, want],
        );
    const events = found.map((r) => ({ id: r.seq, type: r.type, workspaceId: r.workspace_id, data: r.data, timestamp: r.created_at }));
    out.push(...(await visibleEvents(deps, scope.policies ?? null, events)));
    if (found.length) through = found[found.length - 1].seq;
    if (found.length < want || out.length >= opts.limit) return { events: out, through };
  }
}

/** Events after `after` (exclusive) in log order, at most `limit`. */
export async function readFeed(deps: Deps, scope: FeedScope, opts: { after: string; types?: string[]; limit: number }): Promise<FeedEvent[]> {
  return (await readFeedPage(deps, scope, opts)).events;
}

/** The newest seq in the log (a stream without Last-Event-ID starts here). */
export async function logHead(deps: Deps): Promise<string> {
  const r = await firstRow<{ head: string }>(deps.ds, `SELECT last_seq::text AS head FROM event_sequencer WHERE id = 1`);
  return r?.head ?? '0';
}

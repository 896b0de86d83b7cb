import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { readPolicyOf, visibleEvents, type ReadPolicy } from '../access';

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
  const wss: Array<{ id: string; public: boolean; owner_id: string | null }> = ids.length
    ? await deps.ds.query(`SELECT id, public, owner_id FROM workspaces WHERE id = ANY($1::uuid[])`, [ids])
    : [];
  const policies = new Map<string, ReadPolicy>();
  for (const w of wss) policies.set(w.id, await readPolicyOf(deps, caller, { id: w.id, public: w.public, ownerId: w.owner_id }, viewLink));
  return { workspaceIds: ids, agentId: caller?.agentId ?? null, policies };
}

/**
 * Events after `after` (exclusive) in log order, at most `limit`, leaving out what the reader may
 * not read (scope.policies); `through` is the last seq looked at, the cursor to go on from.
 */
export async function readFeedPage(deps: Deps, scope: FeedScope, opts: { after: string; types?: string[]; limit: number }): Promise<{ events: FeedEvent[]; through: string }> {
  if (scope.workspaceIds !== 'all' && !scope.workspaceIds.length) return { events: [], through: opts.after };
  const all = scope.workspaceIds === 'all';
  const out: FeedEvent[] = [];
  let through = opts.after;
  for (;;) {
    const want = opts.limit - out.length;
    const rows: Array<{ seq: string; type: string; workspace_id: string | null; data: Record<string, unknown>; created_at: Date }> = await deps.ds.query(
      `SELECT seq::text AS seq, type, workspace_id, data, created_at FROM outbox
        WHERE seq > $1 AND ($2 OR workspace_id = ANY($3::uuid[])) AND (agent_id IS NULL OR $2 OR agent_id = $4)
          AND ($5::text[] IS NULL OR type = ANY($5::text[]))
        ORDER BY outbox.seq LIMIT $6`,
      [through, all, all ? [] : scope.workspaceIds, scope.agentId, opts.types?.length ? opts.types : null, want],
    );
    const events = rows.map((r) => ({ id: r.seq, type: r.type, workspaceId: r.workspace_id, data: r.data, timestamp: r.created_at }));
    out.push(...(await visibleEvents(deps, scope.policies ?? null, events)));
    if (rows.length) through = rows[rows.length - 1].seq;
    if (rows.length < want || out.length >= opts.limit) return { events: out, through };
  }
}

/** Events after `after` (exclusive) in log order, at most `limit`. */
export async function readFeed(deps: Deps, scope: FeedScope, opts: { after: string; types?: string[]; limit: number }): Promise<FeedEvent[]> {
  return (await readFeedPage(deps, scope, opts)).events;
}

/** The newest seq in the log (a stream without Last-Event-ID starts here). */
export async function logHead(deps: Deps): Promise<string> {
  const [r] = await deps.ds.query(`SELECT last_seq::text AS head FROM event_sequencer WHERE id = 1`);
  return r?.head ?? '0';
}

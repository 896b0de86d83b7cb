import type { Deps } from '../../deps';
import {
  effectiveCapabilities,
  metricReadable,
  narrowsMetrics,
  sourceReadable,
  type Capability,
  type PermissionGrant,
  type Principal,
} from '../../domain/capabilities';
import { grantsInWorkspaces } from './groups';

/**
 * What one caller may read in one workspace (spec §2.10, §2.14, §5): the one rule every channel
 * asks (the routes through WorkspaceAccess, the event feed and stream, webhooks, the data room), so
 * nothing a direct GET refuses reaches the caller another way. Built from the caller's groups and
 * its key's scopes.
 */
export interface ReadPolicy {
  workspaceId: string;
  /** The caller holds read in the workspace at all. */
  reads: boolean;
  /** Some group narrows per-metric or per-source read: events must be looked at one by one. */
  narrows: boolean;
  metric(metricId: string): boolean;
  source(sourceId: string): boolean;
}

export function readPolicy(workspaceId: string, grants: readonly PermissionGrant[], caps: ReadonlySet<Capability>): ReadPolicy {
  const narrowsSources = !caps.has('manage') && grants.some((g) => !!g.sourcePermissions && Object.keys(g.sourcePermissions).length > 0);
  return {
    workspaceId,
    reads: caps.has('read'),
    narrows: narrowsMetrics(grants, caps) || narrowsSources,
    metric: (id) => metricReadable(grants, id, caps),
    source: (id) => sourceReadable(grants, id, caps),
  };
}

/** The policy of a participant (or an anonymous reader) in a workspace, judged as a request would be now. */
export async function readPolicyOf(
  deps: Deps,
  who: Pick<Principal, 'agentId' | 'isMaster' | 'scopes'> | null,
  ws: { id: string; public: boolean; ownerId: string | null },
  viewLink = false,
): Promise<ReadPolicy> {
  return (await readPoliciesIn(deps, who, [ws], viewLink)).get(ws.id)!;
}

/** readPolicyOf for many workspaces, their grants read in one statement. */
export async function readPoliciesIn(
  deps: Deps,
  who: Pick<Principal, 'agentId' | 'isMaster' | 'scopes'> | null,
  wss: ReadonlyArray<{ id: string; public: boolean; ownerId: string | null }>,
  viewLink = false,
): Promise<Map<string, ReadPolicy>> {
  const grantsOf = who?.isMaster ? new Map<string, never[]>() : await grantsInWorkspaces(deps, wss, who?.agentId ?? null, viewLink);
  const out = new Map<string, ReadPolicy>();
  for (const ws of wss) {
    const grants = grantsOf.get(ws.id) ?? [];
    const caps = effectiveCapabilities({
      anonymous: !who,
      isMaster: !!who?.isMaster,
      isOwner: !!who && ws.ownerId === who.agentId,
      isPublicWorkspace: ws.public,
      viewLink,
      groupCapabilities: grants.map((g) => [...g.capabilities]),
      scopes: who ? who.scopes : null,
    });
    out.set(ws.id, readPolicy(ws.id, grants, caps));
  }
  return out;
}

/**
 * The caller's policies in the workspaces it may read beyond the public ones (it owns them, is in
 * one of their groups, or is a member): one policy per workspace, judged by readPolicyOf as a request
 * would be, so a read that widens to "where the caller may read" (a participant's profile) asks the
 * same rule as a direct GET. 'all' for the master key. A key locked to a workspace sees only that one.
 */
export async function readPoliciesOf(deps: Deps, who: Principal | null): Promise<'all' | Map<string, ReadPolicy>> {
  if (!who) return new Map();
  if (who.isMaster) return 'all';
  const candidates: Array<{ id: string; public: boolean; owner_id: string }> = await deps.ds.query(
    `SELECT w.id, w.public, w.owner_id FROM workspaces w
      WHERE (w.owner_id = $1
             OR EXISTS (SELECT 1 FROM group_members gm JOIN groups g ON g.id = gm.group_id WHERE g.workspace_id = w.id AND gm.agent_id = $1)
             OR EXISTS (SELECT 1 FROM memberships mb WHERE mb.workspace_id = w.id AND mb.agent_id = $1))
        AND ($2::uuid IS NULL OR w.id = $2)`,
    [who.agentId, who.keyLocked ? who.keyWorkspaceId : null],
  );
  const policies = await readPoliciesIn(deps, who, candidates.map((w) => ({ id: w.id, public: w.public, ownerId: w.owner_id })));
  return new Map([...policies.values()].filter((p) => p.reads).map((p) => [p.workspaceId, p]));
}

/** An event (feed, stream, webhook) as the policy sees it: its workspace and its data's subject ids. */
export interface EventSubject {
  workspaceId: string | null;
  data: Record<string, unknown>;
}

const idOf = (v: unknown) => (typeof v === 'string' && v.length <= 64 ? v : null);

/**
 * Which of `events` a reader with `policies` (by workspace) may see: an event about a metric (its
 * metricId, or the metric of its marketId) or a source the reader may not read is left out. Events
 * of a workspace with no policy given pass (the caller's scope already chose the workspaces).
 */
export async function visibleEvents<E extends EventSubject>(deps: Pick<Deps, 'ds'>, policies: ReadonlyMap<string, ReadPolicy> | null, events: E[]): Promise<E[]> {
  if (!policies) return events;
  const policyOf = (e: E) => (e.workspaceId ? policies.get(e.workspaceId) : undefined);
  const looked = events.filter((e) => policyOf(e)?.narrows && !idOf(e.data.metricId) && idOf(e.data.marketId));
  const metricOfMarket = new Map<string, string>();
  if (looked.length) {
    const ids = [...new Set(looked.map((e) => idOf(e.data.marketId)!))].filter((id) => /^[0-9a-f-]{36}$/i.test(id));
    const rows: Array<{ id: string; metric_id: string }> = ids.length ? await deps.ds.query(`SELECT id, metric_id FROM markets WHERE id = ANY($1::uuid[])`, [ids]) : [];
    for (const r of rows) metricOfMarket.set(r.id, r.metric_id);
  }
  return events.filter((e) => {
    const p = policyOf(e);
    if (!p) return true;
    if (!p.reads) return false;
    if (!p.narrows) return true;
    const sourceId = idOf(e.data.sourceId);
    if (sourceId && !p.source(sourceId)) return false;
    const marketId = idOf(e.data.marketId);
    const metricId = idOf(e.data.metricId) ?? (marketId ? metricOfMarket.get(marketId) ?? null : null);
    // A book whose metric is gone cannot be judged: a narrowed reader does not get it.
    if (marketId && !metricId) return false;
    return metricId ? p.metric(metricId) : true;
  });
}

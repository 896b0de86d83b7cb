import type { Deps } from '../../deps';
import { rows } from '../../db/queryRows';
import {
  effectiveCapabilities,
  metricReadable,
  narrowsMetrics,
  sourceReadable,
  type Capability,
  type PermissionGrant,
  type Principal,
} from '../../domain/capabilities';
import { grantsInWorkspaces, PUBLIC_GROUP } from './groups';

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
  /** Some group narrows per-metric read (a list of books or figures must be filtered by metric). */
  narrowsMetrics: boolean;
  metric(metricId: string): boolean;
  source(sourceId: string): boolean;
}

/**
 * A switch for the readers' privacy test alone (test/integration/hidden-everywhere.test.ts): with it
 * on, every policy lets every metric and source through, so the test can show that its walk finds the
 * hidden metric when the policy does not hold. Honoured only inside a jest worker.
 */
export const policyOffForTests = { off: false };

export function readPolicy(workspaceId: string, grants: readonly PermissionGrant[], caps: ReadonlySet<Capability>): ReadPolicy {
  if (policyOffForTests.off && process.env.JEST_WORKER_ID !== undefined) {
    return { workspaceId, reads: caps.has('read'), narrows: false, narrowsMetrics: false, metric: () => true, source: () => true };
  }
  const narrowsSources = !caps.has('manage') && grants.some((g) => !!g.sourcePermissions && Object.keys(g.sourcePermissions).length > 0);
  return {
    workspaceId,
    reads: caps.has('read'),
    narrows: narrowsMetrics(grants, caps) || narrowsSources,
    narrowsMetrics: narrowsMetrics(grants, caps),
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
 * Whether a reader may see a proposal (issue 65): a proposal goes with its metrics, those it names as
 * expected to move (else those of its books); one whose metrics the reader may read none of is hidden
 * whole (its title, its comments, its events). One with some hidden metrics shows, but only the
 * readable metrics' books and figures (presentProposal's `readable`).
 */
export function proposalReadable(policy: Pick<ReadPolicy, 'metric'>, p: { metricIds: readonly string[]; bookMetricIds: readonly string[] }): boolean {
  const its = p.metricIds.length ? p.metricIds : p.bookMetricIds;
  return its.length === 0 || its.some((id) => policy.metric(id));
}

/**
 * SQL: proposal `alias` is not hidden with its metrics (proposalReadable, the same rule in SQL): the metrics it
 * names (else its books'), none of them or not all of them among the hidden ids (`hidden`, a uuid[] expression).
 */
export function proposalShownSql(alias: string, hidden: string): string {
  const its = `(CASE WHEN cardinality(${alias}.metric_ids) > 0 THEN ${alias}.metric_ids ELSE ARRAY(SELECT DISTINCT b.metric_id FROM markets b WHERE b.proposal_id = ${alias}.id) END)`;
  return `(cardinality(${its}) = 0 OR NOT (${its} <@ ${hidden}))`;
}

/** The metrics each proposal goes with (proposalReadable), read in one statement. */
export async function proposalMetrics(deps: Pick<Deps, 'ds'>, proposalIds: readonly string[]): Promise<Map<string, { metricIds: string[]; bookMetricIds: string[] }>> {
  const ids = [...new Set(proposalIds)].filter((id) => UUID.test(id));
  if (!ids.length) return new Map();
  const rows: Array<{ id: string; metric_ids: string[]; book_metric_ids: string[] }> = await deps.ds.query(
    `SELECT p.id, p.metric_ids, ARRAY(SELECT DISTINCT mk.metric_id FROM markets mk WHERE mk.proposal_id = p.id) AS book_metric_ids
       FROM proposals p WHERE p.id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { metricIds: r.metric_ids, bookMetricIds: r.book_metric_ids }]));
}

/** A row a reader sees or not by the metric it is about and, when it belongs to one, the proposal (a book, a trade, a position, a figure). */
export interface MetricSubject {
  metricId: string | null;
  proposalId?: string | null;
}

type RowPolicy = Pick<ReadPolicy, 'workspaceId' | 'metric' | 'narrowsMetrics'>;

/**
 * The rows of `rows` the reader with `policy` may see (issue 68's track record reuses it): about a
 * readable metric, and not of a proposal hidden with its metrics (proposalReadable). One statement
 * when some row names a proposal and the policy narrows; none when it does not narrow.
 */
export async function readableRows<T extends MetricSubject>(deps: Pick<Deps, 'ds'>, policy: RowPolicy, rows: readonly T[]): Promise<T[]>;
export async function readableRows<T>(deps: Pick<Deps, 'ds'>, policy: RowPolicy, rows: readonly T[], subject: (row: T) => MetricSubject): Promise<T[]>;
export async function readableRows<T>(deps: Pick<Deps, 'ds'>, policy: RowPolicy, rows: readonly T[], subject: (row: T) => MetricSubject = (row) => row as MetricSubject): Promise<T[]> {
  return readableRowsIn(deps, new Map([[policy.workspaceId, policy]]), rows, (r) => ({ ...subject(r), workspaceId: policy.workspaceId }));
}

/** readableRows over rows of several workspaces, each judged by its workspace's policy; a row of a workspace without one is left out. */
export async function readableRowsIn<T>(
  deps: Pick<Deps, 'ds'>,
  policies: ReadonlyMap<string, RowPolicy>,
  rows: readonly T[],
  subject: (row: T) => MetricSubject & { workspaceId: string },
): Promise<T[]> {
  const byMetric = rows.filter((r) => {
    const s = subject(r);
    const p = policies.get(s.workspaceId);
    return !!p && (!p.narrowsMetrics || !s.metricId || p.metric(s.metricId));
  });
  const looked = byMetric.map(subject).filter((s) => s.proposalId && policies.get(s.workspaceId)!.narrowsMetrics);
  const proposals = await proposalMetrics(deps, looked.map((s) => s.proposalId!));
  return byMetric.filter((r) => {
    const s = subject(r);
    const p = policies.get(s.workspaceId)!;
    if (!s.proposalId || !p.narrowsMetrics) return true;
    const its = proposals.get(s.proposalId);
    return !!its && proposalReadable(p, its);
  });
}

/**
 * The metrics of public workspaces an anonymous reader may not read (their Public group hides them),
 * each judged by the one policy: the platform-wide figures (the leaderboard, seasons, a profile's
 * stats, the marketplace's) are the public's, so they leave these metrics' activity out. Only the
 * Public groups that narrow some metric are read.
 */
export async function publiclyHiddenMetricIds(deps: Deps): Promise<string[]> {
  const rows: Array<{ id: string; owner_id: string | null; metric_permissions: Record<string, unknown> }> = await deps.ds.query(
    `SELECT w.id, w.owner_id, g.metric_permissions FROM workspaces w JOIN groups g ON g.workspace_id = w.id AND g.system AND g.name = $1
      WHERE w.public AND g.metric_permissions <> '{}'::jsonb`,
    [PUBLIC_GROUP],
  );
  if (!rows.length) return [];
  const policies = await readPoliciesIn(deps, null, rows.map((r) => ({ id: r.id, public: true, ownerId: r.owner_id })));
  return rows.flatMap((r) => Object.keys(r.metric_permissions ?? {}).filter((id) => UUID.test(id) && !policies.get(r.id)!.metric(id))).sort();
}

/**
 * The metrics of the policy's workspace it hides, for a reader that filters in SQL (a page and its
 * total must both leave the hidden rows out); null when the policy narrows no metric.
 */
export async function unreadableMetricIds(deps: Pick<Deps, 'ds'>, policy: Pick<ReadPolicy, 'workspaceId' | 'metric' | 'narrowsMetrics'>): Promise<string[] | null> {
  if (!policy.narrowsMetrics) return null;
  const rows: Array<{ id: string }> = await deps.ds.query(`SELECT id FROM metrics WHERE workspace_id = $1`, [policy.workspaceId]);
  return rows.map((r) => r.id).filter((id) => !policy.metric(id));
}

/**
 * The ids of the metrics of a workspace one principal may read, judged as a request would be now:
 * the helper a reader outside the request path (a job, another area's summary) asks so it leaves out
 * what the caller may not read.
 */
export async function readableMetricIds(
  deps: Deps,
  who: Pick<Principal, 'agentId' | 'isMaster' | 'scopes'> | null,
  ws: { id: string; public: boolean; ownerId: string | null },
): Promise<Set<string>> {
  const policy = await readPolicyOf(deps, who, ws);
  if (!policy.reads) return new Set();
  const rows: Array<{ id: string }> = await deps.ds.query(`SELECT id FROM metrics WHERE workspace_id = $1`, [ws.id]);
  return new Set(rows.map((r) => r.id).filter((id) => policy.metric(id)));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Which of `events` a reader with `policies` (by workspace) may see: an event about a metric (its
 * metricId, or the metric of its marketId) or a source the reader may not read is left out, and so
 * is an event about a proposal the reader may not see (proposalReadable); an event listing metrics
 * (a proposal's skipped subsidies) keeps only the readable ones. Events of a workspace with no policy
 * given pass (the caller's scope already chose the workspaces).
 */
export async function visibleEvents<E extends EventSubject>(deps: Pick<Deps, 'ds'>, policies: ReadonlyMap<string, ReadPolicy> | null, events: E[]): Promise<E[]> {
  if (!policies) return events;
  const policyOf = (e: E) => (e.workspaceId ? policies.get(e.workspaceId) : undefined);
  const narrowed = events.filter((e) => policyOf(e)?.narrows);
  const looked = narrowed.filter((e) => !idOf(e.data.metricId) && idOf(e.data.marketId));
  const metricOfMarket = new Map<string, string>();
  if (looked.length) {
    const ids = [...new Set(looked.map((e) => idOf(e.data.marketId)!))].filter((id) => UUID.test(id));
    const markets = ids.length ? await rows<{ id: string; metric_id: string }>(deps.ds, `SELECT id, metric_id FROM markets WHERE id = ANY($1::uuid[])`, [ids]) : [];
    for (const r of markets) metricOfMarket.set(r.id, r.metric_id);
  }
  const proposals = await proposalMetrics(deps, narrowed.map((e) => idOf(e.data.proposalId)).filter((id): id is string => !!id));
  const out: E[] = [];
  for (const e of events) {
    const p = policyOf(e);
    if (!p) {
      out.push(e);
      continue;
    }
    if (!p.reads) continue;
    if (!p.narrows) {
      out.push(e);
      continue;
    }
    const sourceId = idOf(e.data.sourceId);
    if (sourceId && !p.source(sourceId)) continue;
    const marketId = idOf(e.data.marketId);
    const metricId = idOf(e.data.metricId) ?? (marketId ? metricOfMarket.get(marketId) ?? null : null);
    // A book whose metric is gone cannot be judged: a narrowed reader does not get it.
    if (marketId && !metricId) continue;
    if (metricId && !p.metric(metricId)) continue;
    const proposalId = idOf(e.data.proposalId);
    if (proposalId) {
      const its = proposals.get(proposalId);
      // A proposal that is gone cannot be judged either.
      if (!its || !proposalReadable(p, its)) continue;
    }
    out.push(Array.isArray(e.data.skipped) ? { ...e, data: { ...e.data, skipped: e.data.skipped.filter((x) => !idOf((x as { metricId?: unknown })?.metricId) || p.metric(idOf((x as { metricId: unknown }).metricId)!)) } } : e);
  }
  return out;
}

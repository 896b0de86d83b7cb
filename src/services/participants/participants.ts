import { DomainError } from '../../errors';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import { type Capability, type Principal } from '../../domain/capabilities';
import { toNano } from '../../domain/money';
import { groupsByIds, policies } from '../access';
import { createAgent, mintKey, NICKNAME_RE, PLATFORM_AGENT_ID } from '../identity';
import { positionMetricValue, positionWorth } from '../portfolio';
import { liveTradesOf, openPositionsOf, resolvedTotalsOf } from '../standings';
import { accountId, transfer } from '../ledger';
import { requestParticipantDeletion } from '../deletions';
import { enrol, findWorkspace, type WorkspaceRow } from '../workspaces';
import { firstRow, rows } from '../../db/queryRows';

/**
 * A participant's results (spec §2.7, §4.3): realized = settled earnings of resolved books, from the
 * standings aggregate written when each book resolved; consensus PnL adds live positions marked at
 * the book's consensus; metric PnL marks them at the metric's current total instead (positions whose
 * metric has no total are left out of it). Reads the open positions, never the resolved history.
 */
async function resultsOf(deps: Deps, agentId: string, workspaceId: string | null) {
  const [positions, resolved] = await Promise.all([openPositionsOf(deps.ds, agentId, workspaceId), resolvedTotalsOf(deps.ds, agentId, workspaceId)]);
  const metricIds = [...new Set(positions.map((p) => p.market.metricId))];
  const totals = new Map<string, number | null>();
  if (metricIds.length) {
    for (const r of await rows<{ id: string; total: number | null }>(deps.ds, `SELECT id, total FROM metrics WHERE id = ANY($1::uuid[])`, [metricIds])) totals.set(r.id, r.total);
  }
  const realized = resolved.settled;
  let open = 0n;
  let metric = resolved.settled;
  for (const p of positions) {
    const { worth } = positionWorth(p);
    open += worth - p.netCost;
    const atMetric = positionMetricValue(p, totals.get(p.market.metricId) ?? null);
    if (atMetric !== null) metric += atMetric - p.netCost;
  }
  return { realized, open, metric, resolvedTrades: resolved.trades, openMarketIds: positions.map((p) => p.market.id) };
}

/** Nano-units (presenters/participant.ts shows credits). */
export interface PnlRow {
  realizedPnl: bigint;
  pnlConsensus: bigint;
  pnlMetric: bigint;
}

async function workspacePnl(deps: Deps, workspaceId: string): Promise<Map<string, PnlRow>> {
  const holders: Array<{ agent_id: string }> = await deps.ds.query(
    `SELECT agent_id FROM participant_stats WHERE workspace_id = $1
     UNION SELECT p.agent_id FROM markets mk JOIN positions p ON p.market_id = mk.id WHERE mk.workspace_id = $1 AND mk.status IN ('open','closed')`,
    [workspaceId],
  );
  const out = new Map<string, PnlRow>();
  for (const h of holders) {
    const r = await resultsOf(deps, h.agent_id, workspaceId);
    out.set(h.agent_id, { realizedPnl: r.realized, pnlConsensus: r.realized + r.open, pnlMetric: r.metric });
  }
  return out;
}

/** earned = settledEarnings + openEarnings (spec §2.7), over every workspace. */
async function earningsOf(deps: Deps, agentId: string) {
  const r = await resultsOf(deps, agentId, null);
  const live = await liveTradesOf(deps.ds, agentId, r.openMarketIds);
  const t = { n: r.resolvedTrades + live.trades, last: live.lastTradeAt };
  return {
    earned: r.realized + r.open,
    settledEarnings: r.realized,
    openEarnings: r.open,
    totalTrades: t.n as number,
    lastTradeAt: t.last ? (t.last as Date).toISOString() : null,
  };
}

const NO_PNL: PnlRow = { realizedPnl: 0n, pnlConsensus: 0n, pnlMetric: 0n };

export interface ChildInput {
  agentId?: string;
  nickname?: string;
  bio?: string;
  source?: string;
  keyLabel?: string;
  keyScopes: string[];
  memberships?: Array<{ workspaceId: string; groupIds?: string[] }>;
  initialCredits?: number;
}

/**
 * POST /agents: a child participant (bot) of the caller, with memberships, one key and optional
 * credits moved out of the caller's balance, all in one transaction; nothing is created when any
 * part is refused or unaffordable. `authorize` throws unless the caller holds manage in the
 * workspace, and returns the caller's capabilities there (a group cannot grant more).
 */
export async function createChildParticipant(
  deps: Deps,
  actor: Principal,
  input: ChildInput,
  authorize: (ws: WorkspaceRow) => Promise<ReadonlySet<Capability>>,
) {
  const nickname = input.nickname ?? input.agentId!;
  if (!NICKNAME_RE.test(nickname)) {
    throw new DomainError('validation_failed', 'The nickname must be 3 to 30 characters of letters, digits, _ or -, starting with a letter or digit; send nickname when agentId is not one.');
  }
  const wanted: Array<{ ws: WorkspaceRow; held: ReadonlySet<Capability>; groupIds?: string[] }> = [];
  for (const mb of input.memberships ?? []) {
    const ws = await findWorkspace(deps.ds, mb.workspaceId);
    if (!ws) throw new DomainError('workspace_not_found', `No workspace "${mb.workspaceId}" exists.`);
    if (wanted.some((w) => w.ws.id === ws.id)) throw new DomainError('validation_failed', `Workspace "${mb.workspaceId}" is listed twice in memberships.`);
    wanted.push({ ws, held: await authorize(ws), groupIds: mb.groupIds });
  }
  return inTransaction(deps.ds, async (m) => {
    const memberships: Array<{ workspaceId: string; groupIds: string[] }> = [];
    for (const w of wanted) {
      const groups = w.groupIds
        ? await groupsByIds(m, w.ws.id, [...new Set(w.groupIds)])
        : await rows<{ id: string; name: string; capabilities: string[] }>(m, `SELECT id, name, capabilities FROM groups WHERE workspace_id = $1 AND system AND name = 'Trader'`, [w.ws.id]);
      // Re-checked in the transaction: the groups' capabilities are read there (the policy: groups.requireGrantable).
      for (const g of groups) policies.groups.requireGrantable(w.held, g, w.ws.slug);
      memberships.push({ workspaceId: w.ws.id, groupIds: (groups as Array<{ id: string }>).map((g) => g.id) });
    }
    const id = await createAgent(m, { id: input.agentId, nickname, bio: input.bio, source: input.source, parentId: actor.agentId, createdBy: actor.agentId });
    for (const g of memberships) await enrol(m, g.workspaceId, id, g.groupIds);
    const key = await mintKey(m, id, { scopes: input.keyScopes, label: input.keyLabel ?? `created by ${actor.agentId}`, workspaceId: memberships[0]?.workspaceId ?? null });
    const amount = toNano(input.initialCredits ?? 0);
    if (amount > 0n) {
      await transfer(
        m,
        {
          from: actor.isMaster ? accountId.issuance : accountId.agent(actor.agentId),
          to: accountId.agent(id),
          amount,
          kind: actor.isMaster ? 'mint' : 'child_funding',
          ref: actor.agentId,
          memo: `initial credits of ${id}`,
        },
      );
    }
    return {
      agentId: id,
      nickname,
      parentId: actor.agentId,
      apiKey: key.apiKey,
      keyId: key.keyId,
      scopes: key.scopes,
      label: key.label,
      memberships,
      balance: amount,
    };
  });
}

interface AgentListRow {
  id: string;
  nickname: string;
  bio: string;
  operator: string | null;
  parent_id: string | null;
  created_by: string | null;
  unclaimed: boolean;
  created_at: Date;
  balance: string;
}

/** A listed participant (balance in nano-units). */
function listRow(r: AgentListRow) {
  return {
    id: r.id,
    name: r.nickname,
    nickname: r.nickname,
    bio: r.bio,
    operator: r.operator,
    parent: r.parent_id,
    bot: r.parent_id !== null,
    unclaimed: r.unclaimed,
    balance: BigInt(r.balance),
    createdAt: r.created_at.toISOString(),
    joinedAt: r.created_at.toISOString(),
  };
}

/** GET /agents/mine: the caller's own participant first, then the participants it created, claimed or parents. */
export async function participantsOfCaller(deps: Deps, agentId: string) {
  const asOf = deps.clock.now();
  const rows: AgentListRow[] = await deps.ds.query(
    `SELECT a.*, coalesce(ac.balance, 0)::text AS balance FROM agents a
       LEFT JOIN accounts ac ON ac.id = 'agent:' || a.id
      WHERE a.id = $1 OR a.parent_id = $1 OR a.created_by = $1 OR a.claimed_by = $1
      ORDER BY (a.id = $1) DESC, a.created_at ASC, a.id ASC`,
    [agentId],
  );
  const out = [];
  for (const r of rows) out.push({ ...listRow(r), self: r.id === agentId, ...(await earningsOf(deps, r.id)), earnedAsOf: asOf.toISOString() });
  return out;
}

/** GET /agents (catalog form): the workspace's participants with their groups and PnL columns (0 without positions). */
export async function participantsOfWorkspace(deps: Deps, ws: WorkspaceRow) {
  const rows: Array<AgentListRow & { groups: string[]; joined_at: Date }> = await deps.ds.query(
    `SELECT a.*, coalesce(ac.balance, 0)::text AS balance, mb.joined_at,
            coalesce((SELECT array_agg(g.name ORDER BY g.name) FROM group_members gm JOIN groups g ON g.id = gm.group_id
                       WHERE g.workspace_id = $1 AND gm.agent_id = a.id), '{}') AS groups
       FROM memberships mb JOIN agents a ON a.id = mb.agent_id
       LEFT JOIN accounts ac ON ac.id = 'agent:' || a.id
      WHERE mb.workspace_id = $1
      ORDER BY mb.joined_at ASC, a.id ASC`,
    [ws.id],
  );
  const pnl = await workspacePnl(deps, ws.id);
  return rows.map((r) => ({
    ...listRow(r),
    joinedWorkspaceAt: r.joined_at.toISOString(),
    groups: r.groups,
    // Display only (spec §5.4): capabilities come from groups, never from this label.
    role: r.id === ws.ownerId || r.groups.includes('Admin') ? 'admin' : r.groups.includes('Trader') ? 'agent' : 'member',
    ...(pnl.get(r.id) ?? NO_PNL),
  }));
}

/**
 * DELETE /agents/{id} (spec §4.3): `authorize` is the route's policy (policies.participants: the participant
 * itself, its creator or parent, or the master key; and, unless the master key, manage in a workspace it
 * belongs to), asked of the target and its workspaces as read here. Then the deletions area: its open orders cancelled, its balance to its parent,
 * else its creator, else the platform treasury, and its keys revoked in one transaction; its trades,
 * positions and the row itself go in batches by the deletion job (issue 26). Participants owning a
 * workspace must delete it first.
 */
export async function removeParticipant(
  deps: Deps,
  actor: Principal,
  idParam: string,
  authorize: (target: { id: string; parentId: string | null; createdBy: string | null; workspaceIds: string[] }) => Promise<void>,
) {
  const id = idParam === 'me' ? actor.agentId : idParam;
  const target = await firstRow<{ id: string; parent_id: string | null; created_by: string | null; is_platform: boolean }>(
    deps.ds,
    `SELECT id, parent_id, created_by, is_platform FROM agents WHERE id = $1`,
    [id],
  );
  if (!target) throw new DomainError('not_found', `Participant "${id}" was not found.`);
  if (target.is_platform || target.id === PLATFORM_AGENT_ID) throw new DomainError('conflict', 'The platform identity cannot be deleted.');
  if (!actor.isMaster) {
    const workspaceIds = (await rows<{ workspace_id: string }>(deps.ds, `SELECT workspace_id FROM memberships WHERE agent_id = $1`, [id])).map((r) => r.workspace_id);
    await authorize({ id: target.id, parentId: target.parent_id, createdBy: target.created_by, workspaceIds });
  }
  return requestParticipantDeletion(deps, id, actor.agentId);
}

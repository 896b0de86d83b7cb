import { keptFor } from '../kept';
import { IsNull, type DataSource, type EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { pgCode } from '../../db/tx';
import type { Deps } from '../../deps';
import type { Capability } from '../../domain/capabilities';
import { toNano } from '../../domain/money';
import { Group, GroupMember, Membership, Workspace } from '../../entities/workspace';

export type { Workspace };

export const SYSTEM_GROUPS: Array<{ name: string; capabilities: Capability[] }> = [
  { name: 'Public', capabilities: ['read'] },
  { name: 'Trader', capabilities: ['read', 'trade'] },
  { name: 'Admin', capabilities: ['read', 'trade', 'manage'] },
];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

export function slugify(name: string): string {
  const s = name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48);
  return s || 'workspace';
}

/**
 * By id, or by slug case-insensitively (through the unique index workspaces_slug on lower(slug)).
 * A workspace being deleted is not found: nothing reads or writes it while its deletion job runs.
 */
export async function findWorkspace(m: DataSource | EntityManager, idOrSlug: string): Promise<Workspace | null> {
  const repo = m.getRepository(Workspace);
  if (UUID_RE.test(idOrSlug)) return repo.findOneBy({ id: idOrSlug, deletingAt: IsNull() });
  return repo.createQueryBuilder('w').where('lower(w.slug) = lower(:slug)', { slug: idOrSlug }).andWhere('w.deletingAt IS NULL').getOne();
}

/** A workspace by id or slug (case-insensitive); null when none matches. */
export async function workspaceByIdOrSlug(deps: Deps, idOrSlug: string): ReturnType<typeof findWorkspace> {
  return findWorkspace(deps.ds, idOrSlug);
}

export interface CreateWorkspaceInput {
  name: string;
  description?: string;
  public?: boolean;
  slug?: string;
  defaultLiquidityCredits?: number;
  defaultProposalLiquidityCredits?: number;
  externalProposals?: boolean;
}

/** Workspace + the Public, Trader and Admin groups; the creator joins Admin and owns everything. */
export async function createWorkspace(m: EntityManager, ownerId: string, input: CreateWorkspaceInput): Promise<Workspace> {
  let slug = input.slug ?? slugify(input.name);
  if (!input.slug) {
    const taken = await m.getRepository(Workspace).createQueryBuilder('w').where('lower(w.slug) = :slug', { slug }).getExists();
    if (taken) slug = `${slug.slice(0, 40)}-${Math.random().toString(36).slice(2, 8)}`;
  }
  const ws = m.create(Workspace, {
    slug,
    name: input.name,
    description: input.description ?? '',
    public: input.public ?? false,
    ownerId,
    externalProposals: input.externalProposals ?? true,
    defaultLiquidity: toNano(input.defaultLiquidityCredits ?? 100),
    defaultProposalLiquidity: toNano(input.defaultProposalLiquidityCredits ?? 10),
  });
  try {
    await m.query('SAVEPOINT create_ws');
    await m.insert(Workspace, ws); // fills ws.id and ws.createdAt from RETURNING
    await m.query('RELEASE SAVEPOINT create_ws');
  } catch (err) {
    if (pgCode(err) === '23505') {
      await m.query('ROLLBACK TO SAVEPOINT create_ws');
      throw new DomainError('conflict', `The slug "${slug}" is already taken.`);
    }
    throw err;
  }
  for (const g of SYSTEM_GROUPS) {
    const grp = m.create(Group, { workspaceId: ws.id, name: g.name, system: true, capabilities: g.capabilities });
    await m.insert(Group, grp);
    if (g.name === 'Admin') await m.insert(GroupMember, { groupId: grp.id, agentId: ownerId });
  }
  await m.insert(Membership, { workspaceId: ws.id, agentId: ownerId });
  return ws;
}

/** Join as a member of the named system group (idempotent). */
export async function addMember(m: EntityManager, workspaceId: string, agentId: string, groupName = 'Trader'): Promise<void> {
  await m.createQueryBuilder().insert().into(Membership).values({ workspaceId, agentId }).orIgnore().execute();
  const group = await m.getRepository(Group).findOne({ select: { id: true }, where: { workspaceId, system: true, name: groupName } });
  if (group) await m.createQueryBuilder().insert().into(GroupMember).values({ groupId: group.id, agentId }).orIgnore().execute();
}

export async function isMember(m: DataSource | EntityManager, workspaceId: string, agentId: string): Promise<boolean> {
  return m.getRepository(Membership).existsBy({ workspaceId, agentId });
}

/** The caller's highest-priority membership: workspaces it owns first, then the earliest joined. */
export async function defaultWorkspaceOf(deps: Deps, agentId: string): Promise<Workspace | null> {
  return deps.ds
    .getRepository(Workspace)
    .createQueryBuilder('w')
    .innerJoin(Membership, 'mb', 'mb.workspaceId = w.id')
    .where('mb.agentId = :agentId', { agentId })
    .andWhere('w.deletingAt IS NULL')
    .orderBy('(w.ownerId = :agentId)', 'DESC')
    .addOrderBy('mb.joinedAt', 'ASC')
    .addOrderBy('w.createdAt', 'ASC')
    .limit(1)
    .getOne();
}

/** The public workspaces, oldest first (at most 500). */
/** How active a public workspace is: what the home page and the listing sort by. Volume in nano. */
export interface WorkspaceActivity {
  metrics: number;
  openProposals: number;
  openBooks: number;
  volume: bigint;
  lastTradeAt: Date | null;
}

/**
 * Public workspaces, most active first (traded volume, then open proposals, then metrics, then the
 * oldest), with those figures; `q` keeps the ones whose name or slug contains it (case-insensitive).
 */
/** The most a listing answers (the home page shows the first ones). */
const PUBLIC_LISTED = 500;

export async function publicWorkspaces(deps: Deps, opts: { q?: string } = {}): Promise<Array<{ workspace: Workspace; activity: WorkspaceActivity }>> {
  const q = opts.q?.trim().toLowerCase();
  // The ranking of every public workspace sums each one's books (1.3 s at 10,000 workspaces in
  // bench/scale): kept per process like the platform's other figures (services/kept.ts), and a
  // search filters the kept ranking in memory (a live search that matched 1,111 workspaces took
  // 105 ms at p50), so both answer in the same order and may be as old as the ranking.
  const kept = await keptFor(deps, 'workspaces:public-ranking', () => rankPublicWorkspaces(deps));
  const ranked = await withNewerPublic(deps, kept.value, kept.asOf);
  const found = q ? ranked.filter((r) => r.workspace.name.toLowerCase().includes(q) || r.workspace.slug.toLowerCase().includes(q)) : ranked;
  return found.slice(0, PUBLIC_LISTED);
}

/** How far before a kept ranking's start a workspace may have been created and still be missing from it (its transaction committed later). */
const RANKING_OVERLAP_MS = 60_000;

/**
 * The kept ranking with the public workspaces created since it was computed, ranked among
 * themselves at its end (young, with little activity yet): a new public workspace is listed on the
 * next home page, in every process, not one TTL later.
 */
async function withNewerPublic(
  deps: Deps,
  ranked: Array<{ workspace: Workspace; activity: WorkspaceActivity }>,
  asOf: Date,
): Promise<Array<{ workspace: Workspace; activity: WorkspaceActivity }>> {
  const newer: Array<{ id: string }> = await deps.ds.query(`SELECT id FROM workspaces WHERE public AND deleting_at IS NULL AND created_at > $1`, [new Date(asOf.getTime() - RANKING_OVERLAP_MS)]);
  const listed = new Set(ranked.map((r) => r.workspace.id));
  const missing = newer.map((r) => r.id).filter((id) => !listed.has(id));
  return missing.length ? [...ranked, ...(await rankPublicWorkspaces(deps, missing))] : ranked;
}

async function rankPublicWorkspaces(deps: Deps, only?: readonly string[]): Promise<Array<{ workspace: Workspace; activity: WorkspaceActivity }>> {
  // Only what a public reader sees counts: a metric its Public group hides (metric_permissions
  // read: false), and that metric's books, are left out of every figure (hidden means hidden).
  const shown = (metricId: string) =>
    `coalesce((SELECT g.metric_permissions -> ${metricId}::text ->> 'read' FROM groups g WHERE g.workspace_id = w.id AND g.system AND g.name = 'Public' LIMIT 1), 'true') <> 'false'`;
  const qb = deps.ds
    .getRepository(Workspace)
    .createQueryBuilder('w')
    .addSelect(`(SELECT count(*) FROM metrics m WHERE m.workspace_id = w.id AND ${shown('m.id')})`, 'a_metrics')
    .addSelect(`(SELECT count(*) FROM proposals p WHERE p.workspace_id = w.id AND p.status = 'pending')`, 'a_open_proposals')
    .addSelect(`(SELECT count(*) FROM markets k WHERE k.workspace_id = w.id AND k.status = 'open' AND ${shown('k.metric_id')})`, 'a_open_books')
    .addSelect(`(SELECT coalesce(sum(k.volume), 0) FROM markets k WHERE k.workspace_id = w.id AND ${shown('k.metric_id')})`, 'a_volume')
    .addSelect(`(SELECT max(k.last_trade_at) FROM markets k WHERE k.workspace_id = w.id AND ${shown('k.metric_id')})`, 'a_last_trade')
    .where('w.public = true AND w.deleting_at IS NULL');
  if (only) qb.andWhere('w.id IN (:...only)', { only });
  qb.orderBy('a_volume', 'DESC').addOrderBy('a_open_proposals', 'DESC').addOrderBy('a_metrics', 'DESC').addOrderBy('w.created_at', 'ASC');
  const { entities, raw } = await qb.getRawAndEntities();
  return entities.map((workspace, i) => {
    const r = raw[i] as { a_metrics: string; a_open_proposals: string; a_open_books: string; a_volume: string; a_last_trade: Date | null };
    return {
      workspace,
      activity: { metrics: Number(r.a_metrics), openProposals: Number(r.a_open_proposals), openBooks: Number(r.a_open_books), volume: BigInt(r.a_volume), lastTradeAt: r.a_last_trade },
    };
  });
}

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


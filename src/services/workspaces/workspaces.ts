import type { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../errors';
import { pgCode } from '../../db/tx';
import type { Capability } from '../../domain/capabilities';
import { toNano } from '../../domain/money';

export interface WorkspaceRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  public: boolean;
  ownerId: string;
  externalProposals: boolean;
  defaultLiquidity: bigint;
  defaultProposalLiquidity: bigint;
  createdAt: Date;
}

export const SYSTEM_GROUPS: Array<{ name: string; capabilities: Capability[] }> = [
  { name: 'Public', capabilities: ['read'] },
  { name: 'Trader', capabilities: ['read', 'trade'] },
  { name: 'Admin', capabilities: ['read', 'trade', 'manage'] },
];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

function rowToWorkspace(r: Record<string, unknown>): WorkspaceRow {
  return {
    id: r.id as string,
    slug: r.slug as string,
    name: r.name as string,
    description: r.description as string,
    public: r.public as boolean,
    ownerId: r.owner_id as string,
    externalProposals: r.external_proposals as boolean,
    defaultLiquidity: BigInt(r.default_liquidity as string),
    defaultProposalLiquidity: BigInt(r.default_proposal_liquidity as string),
    createdAt: r.created_at as Date,
  };
}

export function slugify(name: string): string {
  const s = name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48);
  return s || 'workspace';
}

export async function findWorkspace(m: DataSource | EntityManager, idOrSlug: string): Promise<WorkspaceRow | null> {
  const byId = UUID_RE.test(idOrSlug);
  const rows = await m.query(`SELECT * FROM workspaces WHERE ${byId ? 'id = $1::uuid' : 'lower(slug) = lower($1)'}`, [idOrSlug]);
  return rows.length ? rowToWorkspace(rows[0]) : null;
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
export async function createWorkspace(m: EntityManager, ownerId: string, input: CreateWorkspaceInput): Promise<WorkspaceRow> {
  let slug = input.slug ?? slugify(input.name);
  if (!input.slug) {
    const taken = await m.query(`SELECT 1 FROM workspaces WHERE lower(slug) = $1`, [slug]);
    if (taken.length) slug = `${slug.slice(0, 40)}-${Math.random().toString(36).slice(2, 8)}`;
  }
  let row;
  try {
    await m.query('SAVEPOINT create_ws');
    [row] = await m.query(
      `INSERT INTO workspaces (slug, name, description, public, owner_id, external_proposals, default_liquidity, default_proposal_liquidity)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [
        slug,
        input.name,
        input.description ?? '',
        input.public ?? false,
        ownerId,
        input.externalProposals ?? true,
        toNano(input.defaultLiquidityCredits ?? 100).toString(),
        toNano(input.defaultProposalLiquidityCredits ?? 10).toString(),
      ],
    );
    await m.query('RELEASE SAVEPOINT create_ws');
  } catch (err) {
    if (pgCode(err) === '23505') {
      await m.query('ROLLBACK TO SAVEPOINT create_ws');
      throw new ApiError('conflict', `The slug "${slug}" is already taken.`);
    }
    throw err;
  }
  const ws = rowToWorkspace(row);
  for (const g of SYSTEM_GROUPS) {
    const [grp] = await m.query(`INSERT INTO groups (workspace_id, name, system, capabilities) VALUES ($1, $2, true, $3) RETURNING id`, [ws.id, g.name, g.capabilities]);
    if (g.name === 'Admin') await m.query(`INSERT INTO group_members (group_id, agent_id) VALUES ($1, $2)`, [grp.id, ownerId]);
  }
  await m.query(`INSERT INTO memberships (workspace_id, agent_id) VALUES ($1, $2)`, [ws.id, ownerId]);
  return ws;
}

/** Join as a member of the named system group (idempotent). */
export async function addMember(m: EntityManager, workspaceId: string, agentId: string, groupName = 'Trader'): Promise<void> {
  await m.query(`INSERT INTO memberships (workspace_id, agent_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [workspaceId, agentId]);
  await m.query(
    `INSERT INTO group_members (group_id, agent_id)
     SELECT id, $2 FROM groups WHERE workspace_id = $1 AND system AND name = $3
     ON CONFLICT DO NOTHING`,
    [workspaceId, agentId, groupName],
  );
}

export async function isMember(m: DataSource | EntityManager, workspaceId: string, agentId: string): Promise<boolean> {
  const rows = await m.query(`SELECT 1 FROM memberships WHERE workspace_id = $1 AND agent_id = $2`, [workspaceId, agentId]);
  return rows.length > 0;
}

/** The caller's highest-priority membership: workspaces it owns first, then the earliest joined. */
export async function defaultWorkspaceFor(ds: DataSource, agentId: string): Promise<WorkspaceRow | null> {
  const rows = await ds.query(
    `SELECT w.* FROM memberships mb JOIN workspaces w ON w.id = mb.workspace_id
      WHERE mb.agent_id = $1 ORDER BY (w.owner_id = $1) DESC, mb.joined_at ASC, w.created_at ASC LIMIT 1`,
    [agentId],
  );
  return rows.length ? rowToWorkspace(rows[0]) : null;
}

export interface GroupGrant {
  capabilities: string[];
  metricPermissions: Record<string, { read?: boolean; trade?: boolean }>;
}

export async function listPublicWorkspaces(ds: DataSource): Promise<WorkspaceRow[]> {
  const rows = await ds.query(`SELECT * FROM workspaces WHERE public ORDER BY created_at ASC LIMIT 500`);
  return rows.map(rowToWorkspace);
}

import { z } from 'zod';
import { metricSchema } from './metrics';
import { capability, count, creditAmount, instant, nullableInstant } from './output';

const workspaceFields = {
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  public: z.boolean(),
  ownerId: z.string(),
  externalProposals: z.boolean(),
  defaultLiquidityCredits: creditAmount,
  defaultProposalLiquidityCredits: creditAmount,
  createdAt: instant,
};

/** presentWorkspace without metrics (they are listed only by GET /workspaces/current). */
export const workspaceSchema = z.object({ ...workspaceFields, metrics: z.array(metricSchema).max(0) }).meta({ id: 'Workspace' });
/** GET /marketplace/workspaces/public: a public workspace with how active it is (what the listing sorts by). */
export const publicWorkspaceSchema = workspaceSchema.extend({
  activity: z.object({
    metrics: count,
    openProposals: count,
    openBooks: count,
    volume: creditAmount.describe('Credits traded on its books, all time.'),
    lastTradeAt: nullableInstant,
  }),
});
export const currentWorkspaceSchema = z.object({ ...workspaceFields, metrics: z.array(metricSchema), capabilities: z.array(capability) });
export const myWorkspaceSchema = z.object({ id: z.string(), name: z.string(), slug: z.string(), role: z.enum(['owner', 'admin', 'member']), visibility: z.enum(['public', 'private']) });
export const joinSchema = z.object({ ok: z.boolean(), workspaceId: z.string(), slug: z.string(), group: z.string() });
export const viewLinkSchema = z.object({
  token: z.string(),
  url: z.string(),
  header: z.literal('X-View-Link'),
  workspaceId: z.string(),
  createdAt: instant,
  created: z.boolean(),
});

const permissions = (fields: z.ZodRawShape) => z.record(z.string(), z.object(fields));
export const groupSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    system: z.boolean(),
    capabilities: z.array(z.string()),
    metricPermissions: permissions({ read: z.boolean().optional(), trade: z.boolean().optional() }),
    sourcePermissions: permissions({ read: z.boolean().optional() }),
    memberCount: count,
    members: z.array(z.object({ id: z.string(), nickname: z.string() })).optional().describe('Listed for holders of manage.'),
    createdAt: instant,
  })
  .meta({ id: 'Group' });

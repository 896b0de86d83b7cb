import { z } from 'zod';
import { ASK_TYPES, SETTABLE_ASK_TYPES } from '../../domain/connections';
import { instant, nullableInstant } from './output';

/** Spec §2.13 connection row. */
export const connectionSchema = z
  .object({
    id: z.string(),
    clientId: z.string(),
    clientName: z.string(),
    redirectHost: z.string(),
    connectedAt: instant,
    lastUsedAt: nullableInstant,
    ask: z.object(Object.fromEntries(ASK_TYPES.map((t) => [t, z.boolean()])) as Record<(typeof ASK_TYPES)[number], z.ZodBoolean>),
    scopes: z.array(z.string()).describe("The key scopes the person granted at consent (spec §5.5); ['*'] when every grant was given."),
  })
  .meta({ id: 'Connection' });

/** Spec §2.13 call log row; status 0: refused by the connector before any request. */
export const connectionCallSchema = z
  .object({
    tool: z.string(),
    method: z.string(),
    path: z.string(),
    workspace: z.string().nullable(),
    body: z.string().nullable(),
    confirmation: z.enum(['not_asked', 'accepted', 'declined', 'cancelled', 'timed_out', 'unsupported']),
    status: z.number().int(),
    at: instant,
  })
  .meta({ id: 'ConnectionCall' });

const settable = `settable types: ${SETTABLE_ASK_TYPES.join(', ')} (look never asks)`;

/** PUT /connections/{id}/ask: only the settable types; naming look (or anything else, such as confirmations) is 400. */
export const askBody = z.strictObject(
  {
    ask: z.strictObject(Object.fromEntries(SETTABLE_ASK_TYPES.map((t) => [t, z.boolean({ error: 'must be true or false' }).optional()])) as Record<(typeof SETTABLE_ASK_TYPES)[number], z.ZodOptional<z.ZodBoolean>>, {
      error: (iss) => (iss.code === 'unrecognized_keys' ? `names ${iss.keys.join(', ')}: ${settable}` : undefined),
    }),
  },
  { error: (iss) => (iss.code === 'unrecognized_keys' ? `names ${iss.keys.join(', ')}: the body is { ask: { <type>: boolean } }` : undefined) },
);

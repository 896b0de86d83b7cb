import { z } from 'zod';
import { NOTIFICATION_SWITCHES } from '../../domain/webhooks';
import { policies } from '../../services/access';
import { EVENT_TYPES } from '../../services/events';
import {
  createHook,
  deleteHook,
  deliveriesOf,
  hookOf,
  listHooks,
  notificationSwitches,
  replayHook,
  retryDelivery,
  rotateHookSecret,
  setNotificationSwitches,
  testHook,
  updateHook,
} from '../../services/hooks';
import { presentDelivery, presentHook, presentSwitches } from '../presenters/events';
import { defineRoute } from '../registry';

const eventType = z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(', ')}` });
const subscription = z.union(
  [
    eventType,
    z.strictObject({
      type: eventType,
      metricNames: z.array(z.string().min(1).max(200)).max(100).optional(),
      metricIds: z.array(z.string().min(1).max(200)).max(100).optional(),
    }),
  ],
  { error: `must be an event type (one of ${EVENT_TYPES.join(', ')}) or { type, metricNames?, metricIds? } with one` },
);
const hookUrl = z.string().min(1).max(2000);
const hookBody = z.strictObject({
  url: hookUrl,
  events: z.array(subscription).min(1, 'must name at least one event type').max(50),
  description: z.string().max(500).optional(),
});
const hookParams = z.object({ id: z.string().min(1).max(100) });
const instant = z.iso.datetime({ offset: true });

const hookSchema = z.object({
  id: z.string(),
  workspaceId: z.string(),
  agentId: z.string(),
  url: z.string(),
  description: z.string(),
  events: z.array(z.object({ type: z.string(), metricNames: z.array(z.string()).optional(), metricIds: z.array(z.string()).optional() })),
  status: z.enum(['active', 'failing', 'disabled']),
  disabledAt: instant.nullable(),
  disabledReason: z.string().nullable(),
  failingSince: instant.nullable(),
  nextAttemptAt: instant.nullable(),
  lastEventId: z.string(),
  secretRotatingUntil: instant.nullable(),
  createdAt: instant,
  updatedAt: instant,
});
const hookWithSecret = hookSchema.extend({ secret: z.string() });
const deliverySchema = z.object({
  id: z.string(),
  hookId: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  attempt: z.number().int(),
  status: z.enum(['delivered', 'failed', 'gone', 'backoff']),
  httpStatus: z.number().int().nullable(),
  latencyMs: z.number().int(),
  response: z.string(),
  error: z.string().nullable(),
  manual: z.boolean(),
  createdAt: instant,
});
const switchesSchema = z.object({ agentId: z.string(), notifications: z.object(Object.fromEntries(NOTIFICATION_SWITCHES.map((k) => [k, z.boolean()]))) });

export const postHooks = defineRoute({
  method: 'POST',
  path: '/hooks',
  auth: policies.hooks.create,
  summary:
    'Register a webhook endpoint in the workspace { url, events: [type | { type, metricNames?, metricIds? }], description? } (metric filters narrow metric:updated). Deliveries follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The signing secret (whsec_...) is in this answer only. https only; the endpoint receives events written from now on (POST /hooks/{id}/replay reaches back).',
  body: hookBody,
  response: hookWithSecret,
  successStatus: 201,
  errors: ['workspace_not_found'],
  handler: async (c) => {
    const { hook, secret } = await createHook(c.deps, c.identity(), c.workspace().workspace.id, c.body);
    c.status(201);
    return presentHook(hook, secret);
  },
});

export const getHooks = defineRoute({
  method: 'GET',
  path: '/hooks',
  auth: policies.hooks.list,
  summary: "The caller's webhook endpoints (every workspace; X-Workspace-Id narrows to one).",
  response: z.array(hookSchema),
  errors: ['workspace_not_found'],
  handler: async (c) => {
    const named = c.koa.get('x-workspace-id').trim() ? c.workspace().workspace.id : undefined;
    return (await listHooks(c.deps, c.identity(), named)).map((h) => presentHook(h));
  },
});

export const getHooksById = defineRoute({
  method: 'GET',
  path: '/hooks/:id',
  auth: policies.hooks.read,
  summary: 'One of your webhook endpoints, with its delivery state (status active | failing | disabled, nextAttemptAt, lastEventId).',
  params: hookParams,
  response: hookSchema,
  errors: ['not_found'],
  handler: async (c) => presentHook(await hookOf(c.deps, c.identity(), c.params.id)),
});

export const patchHooksById = defineRoute({
  method: 'PATCH',
  path: '/hooks/:id',
  auth: policies.hooks.edit,
  summary: 'Edit an endpoint { url?, events?, description?, enabled? }; enabled: true re-enables a disabled endpoint where it stopped.',
  params: hookParams,
  body: z.strictObject({ url: hookUrl.optional(), events: hookBody.shape.events.optional(), description: z.string().max(500).optional(), enabled: z.boolean().optional() }),
  response: hookSchema,
  errors: ['not_found'],
  handler: async (c) => presentHook(await updateHook(c.deps, c.identity(), c.params.id, c.body)),
});

export const deleteHooksById = defineRoute({
  method: 'DELETE',
  path: '/hooks/:id',
  auth: policies.hooks.remove,
  summary: 'Delete an endpoint and its delivery log (204).',
  params: hookParams,
  errors: ['not_found'],
  handler: async (c) => {
    await deleteHook(c.deps, c.identity(), c.params.id);
  },
});

export const postHooksByIdRotateSecret = defineRoute({
  method: 'POST',
  path: '/hooks/:id/rotate-secret',
  auth: policies.hooks.rotateSecret,
  summary: 'A new signing secret, shown once; for 24 h messages carry signatures by the old and the new secret (space-separated).',
  params: hookParams,
  response: hookWithSecret,
  errors: ['not_found'],
  handler: async (c) => {
    const { hook, secret } = await rotateHookSecret(c.deps, c.identity(), c.params.id);
    return presentHook(hook, secret);
  },
});

export const postHooksByIdTest = defineRoute({
  method: 'POST',
  path: '/hooks/:id/test',
  auth: policies.hooks.sendTest,
  summary: 'Send a signed webhook:test message now; the answer is the logged delivery (status, httpStatus, latencyMs, response).',
  params: hookParams,
  response: deliverySchema,
  errors: ['not_found'],
  handler: async (c) => presentDelivery(await testHook(c.deps, c.identity(), c.params.id)),
});

export const getHooksByIdDeliveries = defineRoute({
  method: 'GET',
  path: '/hooks/:id/deliveries',
  auth: policies.hooks.readDeliveries,
  summary: "The endpoint's delivery log, newest first: one entry per attempt (status, httpStatus, latencyMs, attempt, response <= 1 KB). ?before=<deliveryId>, ?limit (<= 500).",
  params: hookParams,
  query: z.object({ before: z.string().regex(/^\d{1,18}$/).optional(), limit: z.coerce.number().int().min(1).max(500).default(100) }),
  response: z.array(deliverySchema),
  errors: ['not_found'],
  handler: async (c) => (await deliveriesOf(c.deps, c.identity(), c.params.id, c.query)).map(presentDelivery),
});

export const postHooksByIdDeliveriesByDeliveryIdRetry = defineRoute({
  method: 'POST',
  path: '/hooks/:id/deliveries/:deliveryId/retry',
  auth: policies.hooks.retryDelivery,
  summary: "Send a logged delivery's event again now (out of band: the endpoint's order is untouched); the answer is the new delivery.",
  params: hookParams.extend({ deliveryId: z.string().min(1).max(30) }),
  response: deliverySchema,
  errors: ['not_found'],
  handler: async (c) => presentDelivery(await retryDelivery(c.deps, c.identity(), c.params.id, c.params.deliveryId)),
});

export const postHooksByIdReplay = defineRoute({
  method: 'POST',
  path: '/hooks/:id/replay',
  auth: policies.hooks.replay,
  summary: 'Re-send, in order, every matching event after { after } (an event id); later deliveries continue from there.',
  params: hookParams,
  body: z.strictObject({ after: z.union([z.string().regex(/^\d{1,18}$/), z.number().int().min(0)]).transform(String) }),
  response: z.object({ hookId: z.string(), after: z.string(), head: z.string() }),
  successStatus: 202,
  errors: ['not_found', 'conflict'],
  handler: async (c) => {
    c.status(202);
    return replayHook(c.deps, c.identity(), c.params.id, c.body.after);
  },
});

const agentParam = z.object({ id: z.string().min(1).max(200) });

export const getAgentsByIdNotifications = defineRoute({
  method: 'GET',
  path: '/agents/:id/notifications',
  auth: policies.hooks.readNotifications,
  summary: "A participant's notification switches (spec §2.7): which events reach its hooks beyond their filters. {id} may be 'me'.",
  params: agentParam,
  response: switchesSchema,
  errors: ['not_found', 'not_authorized'],
  handler: async (c) => {
    const s = await notificationSwitches(c.deps, c.identity(), c.params.id);
    return presentSwitches(s.agentId, s.notifications);
  },
});

export const putAgentsByIdNotifications = defineRoute({
  method: 'PUT',
  path: '/agents/:id/notifications',
  auth: policies.hooks.setNotifications,
  summary:
    'Set notification switches { commentOnMyProposal?, replyToMyComment?, newProposal?, anyComment?, marketResolved?, contractDecided? }; omitted ones keep their value. newProposal gates proposal:created, marketResolved market:resolved, contractDecided proposal:status_changed.',
  params: agentParam,
  body: z.strictObject(Object.fromEntries(NOTIFICATION_SWITCHES.map((k) => [k, z.boolean().optional()])) as Record<(typeof NOTIFICATION_SWITCHES)[number], z.ZodOptional<z.ZodBoolean>>),
  response: switchesSchema,
  errors: ['not_found', 'not_authorized'],
  handler: async (c) => {
    const s = await setNotificationSwitches(c.deps, c.identity(), c.params.id, c.body);
    return presentSwitches(s.agentId, s.notifications);
  },
});

import { z } from 'zod';
import { listFeedback, submitFeedback } from '../../services/feedback';
import { policies } from '../../services/access';
import { presentFeedback } from '../presenters/feedback';
import { defineRoute } from '../registry';
import { limitQuery } from '../schemas/common';
import { feedbackSchema } from '../schemas/feedback';

const MAX_CONTEXT_CHARS = 10_000;

export const postFeedback = defineRoute({
  method: 'POST',
  path: '/feedback',
  auth: policies.feedback.create,
  successStatus: 201,
  response: feedbackSchema,
  errors: ['not_authorized'],
  summary:
    'Report a problem or an idea: { message (1 to 5000 characters), context? (an object, e.g. { requestId, marketId, code }, at most 10,000 characters as JSON) }. Stored with the caller, the workspace named by X-Workspace-Id (if any) and this request id. 201 with the stored report.',
  body: z.object({
    message: z.string({ error: 'is required' }).trim().min(1, 'must not be blank').max(5000, 'must be at most 5000 characters'),
    context: z
      .record(z.string(), z.unknown(), { error: 'must be an object' })
      .refine((o) => JSON.stringify(o).length <= MAX_CONTEXT_CHARS, `must be at most ${MAX_CONTEXT_CHARS} characters as JSON`)
      .optional(),
  }),
  handler: async (c) => {
    // A report is filed under a workspace only by someone who may read it (an outsider naming a private one: 403).
    if (c.access) c.require('read');
    const row = await submitFeedback(c.deps, {
      agentId: c.identity().agentId,
      workspaceId: c.access?.workspace.id ?? null,
      message: c.body.message,
      context: c.body.context ?? null,
      requestId: c.koa.response.get('X-Request-Id') || null,
    });
    c.status(201);
    return presentFeedback(row);
  },
});

export const getFeedback = defineRoute({
  method: 'GET',
  path: '/feedback',
  auth: policies.feedback.list,
  response: z.array(feedbackSchema),
  errors: [],
  summary: 'Reports, newest first. Platform operator only. Query limit (default 50, max 200), before (id of the last report of the previous page), agentId. X-Total-Count carries the number matching.',
  query: z.object({ limit: limitQuery(50, 200), before: z.string().regex(/^\d{1,18}$/, 'must be a report id').optional(), agentId: z.string().max(200).optional() }),
  handler: async (c) => {
    const page = await listFeedback(c.deps, c.query);
    c.koa.set('X-Total-Count', String(page.total));
    return page.rows.map(presentFeedback);
  },
});

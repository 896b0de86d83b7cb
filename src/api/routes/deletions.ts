import { z } from 'zod';
import { deletionFor } from '../../services/deletions';
import { policies } from '../../services/access';
import { presentDeletion } from '../presenters/deletion';
import { defineRoute } from '../registry';
import { deletionSchema } from '../schemas/deletions';

export const getDeletionsById = defineRoute({
  method: 'GET',
  path: '/deletions/:id',
  response: deletionSchema,
  errors: ['not_found'],
  auth: policies.deletions.read,
  summary:
    'The progress of a workspace or participant deletion (DELETE /workspaces/{id}, DELETE /agents/{id} answer 202 with it): state queued, running, done or failed, the phase, and rows done of total per phase. Its requester and the master key may read it.',
  params: z.object({ id: z.string().min(1).max(200) }),
  handler: async (c) => presentDeletion(await deletionFor(c.deps, c.identity(), c.params.id)),
});

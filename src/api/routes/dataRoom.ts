import { z } from 'zod';
import { workspaceActions } from '../../services/dataRoom';
import { policies } from '../../services/access';
import { presentActionPage } from '../presenters/dataRoom';
import { defineRoute } from '../registry';
import { limitQuery } from '../schemas/common';
import { ACTION_KINDS, actionPageSchema } from '../schemas/dataRoom';

export const getDataRoomActions = defineRoute({
  method: 'GET',
  path: '/data-room/actions',
  response: actionPageSchema,
  errors: [],
  auth: policies.dataRoom.readActions,
  summary:
    "The workspace's public, append-only log of acts, newest first: metric revisions of name and description, readings filed, proposal decisions, settlements and voids with their reasons. Query limit (default 50, max 200), cursor (nextCursor of the previous page), kind (comma-separated: metric, reading, proposal, settlement, void). Rows about metrics the caller may not read are left out.",
  query: z.object({
    limit: limitQuery(50, 200),
    cursor: z.string().max(200).optional(),
    kind: z
      .string()
      .transform((s) => s.split(',').map((k) => k.trim()).filter(Boolean))
      .pipe(z.array(z.enum(ACTION_KINDS, { error: `must list kinds among ${ACTION_KINDS.join(', ')}` })))
      .optional(),
  }),
  handler: async (c) => {
    const access = c.workspace();
    const page = await workspaceActions(c.deps, {
      workspaceId: access.workspace.id,
      limit: c.query.limit,
      cursor: c.query.cursor,
      kinds: c.query.kind,
      reader: access.policy,
    });
    return presentActionPage(page);
  },
});

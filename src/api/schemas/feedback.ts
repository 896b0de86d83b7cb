import { z } from 'zod';
import { instant } from './output';

/** presentFeedback (presenters/feedback.ts). */
export const feedbackSchema = z.object({
  id: z.string(),
  agentId: z.string().nullable().describe('Who sent it (null once that participant is deleted).'),
  nickname: z.string().nullable(),
  workspaceId: z.string().nullable().describe('The workspace named with the report (X-Workspace-Id), if any.'),
  message: z.string(),
  context: z.record(z.string(), z.unknown()).nullable(),
  requestId: z.string().nullable().describe('X-Request-Id of the POST /feedback request.'),
  createdAt: instant,
});

import { z } from 'zod';
import { instant, nullableInstant } from './output';

/** presentDeletion (presenters/deletion.ts): a large deletion's progress, as GET /deletions/{id} shows it. */
export const deletionSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['workspace', 'participant']),
    targetId: z.string(),
    targetName: z.string(),
    state: z.enum(['queued', 'running', 'done', 'failed']).describe('failed: the last attempt failed (error says why); it is tried again about a minute later.'),
    phase: z.string().nullable().describe('The phase running now; null once done.'),
    phases: z.array(z.object({ name: z.string(), done: z.number().int(), total: z.number().int(), longestBatchMs: z.number().int().optional() })).describe('Rows (books in phase books) done of the total counted when the job started.'),
    done: z.number().int(),
    total: z.number().int(),
    batches: z.number().int().describe('Transactions run so far, each of bounded size.'),
    longestBatchMs: z.number().int(),
    error: z.string().nullable(),
    createdAt: instant,
    updatedAt: instant,
    finishedAt: nullableInstant,
    statusUrl: z.string().describe('GET it to follow the progress.'),
  })
  .meta({ id: 'Deletion' });

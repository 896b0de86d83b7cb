import { z } from 'zod';
import { instant, nullableInstant } from './output';

export const ACTION_KINDS = ['metric', 'reading', 'proposal', 'settlement', 'void'] as const;

/** presentAction (presenters/dataRoom.ts): one act; the fields of other kinds are null. */
export const actionSchema = z.object({
  id: z.string().describe('<kind>:<id>, stable and unique in the workspace.'),
  kind: z.enum(ACTION_KINDS).describe('metric: a name or description revision (spec §4.4); reading: a value filed; proposal: a decision; settlement: a book resolved; void: a book voided.'),
  at: instant,
  agentId: z.string().nullable().describe('Who acted, where recorded (null for the lifecycle itself).'),
  metricId: z.string().nullable(),
  metricName: z.string().nullable(),
  field: z.enum(['name', 'description']).nullable(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  oldValue: z.number().nullable(),
  value: z.number().nullable().describe('reading: the value filed; settlement: the value the book resolved at.'),
  na: z.boolean(),
  asOf: nullableInstant,
  note: z.string().nullable(),
  proposalId: z.string().nullable(),
  title: z.string().nullable(),
  decision: z.enum(['approved', 'declined', 'withdrawn']).nullable(),
  spam: z.boolean(),
  marketId: z.string().nullable(),
  targetDate: z.string().nullable(),
  branch: z.enum(['approved', 'declined']).nullable(),
  settledEarly: z.boolean(),
  reason: z.string().nullable().describe('settlement: the reason of an early settle (null for a book resolved at its reading); void: why it was voided.'),
});

export const actionPageSchema = z.object({
  actions: z.array(actionSchema),
  nextCursor: z.string().nullable().describe('Pass as cursor for the next (older) page; null on the last page.'),
});

import { z } from 'zod';

/** Building blocks of response schemas: how values look once presented (spec §2, §7). */
export const instant = z.iso.datetime({ offset: true });
export const nullableInstant = instant.nullable();
/** Whole credits as JSON numbers (nano-units are converted in the presenters). */
export const creditAmount = z.number();
export const direction = z.enum(['higher', 'lower']);
export const branch = z.enum(['approved', 'declined']);
export const capability = z.enum(['read', 'trade', 'manage', 'manage_workspace']);
/** Superseded parameters the request used (the Deprecation header says the same). */
export const warnings = z.array(z.string()).optional().describe('Present when the request used a superseded parameter; the response also carries a Deprecation header.');
export const ok = z.literal(true);
export const count = z.number().int().min(0);

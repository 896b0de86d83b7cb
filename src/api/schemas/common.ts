import { z } from 'zod';
import { MAX_CREDITS } from '../../domain/money';

/** Whole-credit JSON numbers: finite, at most 1e12, at most 9 decimals meaningful. */
export const credits = z.number({ error: 'must be a number of credits' }).min(0, 'must not be negative').max(MAX_CREDITS, 'is too large');
export const positiveCredits = z.number({ error: 'must be a number of credits' }).gt(0, 'must be greater than 0').max(MAX_CREDITS, 'is too large');
export const idParam = z.object({ id: z.string().min(1).max(200) });
export const nickname = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{2,29}$/, 'must be 3 to 30 characters of letters, digits, _ or -, starting with a letter or digit');
export const limitQuery = (def: number, max: number) =>
  z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(max, `must be at most ${max}`).default(def);
/** Query flags such as ?markets=1 or ?trends=true. */
export const flag = z
  .enum(['1', '0', 'true', 'false', ''], { error: 'must be 1, 0, true or false' })
  .transform((v) => v === '1' || v === 'true' || v === '')
  .optional();

import { z } from 'zod';
import { fitsNano, MAX_CREDITS } from '../../domain/money';

const NANO_RULE = 'must have at most 9 decimals (the smallest amount is 0.000000001 credits)';
/** Every credit amount a client sends: finite, at most 1e12, at most 9 decimals (finer is refused, never rounded). */
export const credits = z.number({ error: 'must be a number of credits' }).min(0, 'must not be negative').max(MAX_CREDITS, 'is too large').refine(fitsNano, NANO_RULE);
export const positiveCredits = z
  .number({ error: 'must be a number of credits' })
  .gt(0, 'must be greater than 0')
  .max(MAX_CREDITS, 'is too large')
  .refine(fitsNano, NANO_RULE);
/**
 * A number of shares to sell or to rest: shares are what a client reads from a position and often
 * divides, so finer than a nano-share rounds to the nearest one (credits never do); 0 after rounding
 * is refused.
 */
export const positiveShares = z
  .number({ error: 'must be a number of shares' })
  .gt(0, 'must be greater than 0')
  .max(MAX_CREDITS, 'is too large')
  .refine((x) => x >= 5e-10, 'must be at least 0.000000001 shares');
export const idParam = z.object({ id: z.string().min(1).max(200) });
/** A path id that is a UUID (the column is uuid: anything else is a 400, not a database error). */
export const uuidParam = (what: string) => z.object({ id: z.uuid(`must be ${what} id (a UUID)`) });
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

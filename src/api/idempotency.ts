import type { Context } from 'koa';
import { DomainError } from '../errors';

/** The optional Idempotency-Key header of a money-moving request: 1 to 200 characters, else 400. */
export function idempotencyKey(c: { koa: Pick<Context, 'get'> }): string | undefined {
  const key = c.koa.get('idempotency-key') || undefined;
  if (key !== undefined && (key.length > 200 || !key.trim())) throw new DomainError('validation_failed', 'The Idempotency-Key header must be 1 to 200 characters.');
  return key;
}

import { randomUUID } from 'node:crypto';

/** The X-Request-Id an answer carries: the caller's own (cut to 100 characters) or a fresh one. */
export function requestIdFor(sent: string | string[] | undefined): string {
  const own = Array.isArray(sent) ? sent[0] : sent;
  return (own || randomUUID()).slice(0, 100);
}

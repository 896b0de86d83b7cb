import pino from 'pino';

/**
 * Errors are logged by type, message, code and stack only: a database error object also carries
 * the SQL text and its parameters (key hashes, balances, callers' input), which never reach a log.
 */
export function safeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: typeof err === 'string' ? err : 'non-Error thrown' };
  const e = err as Error & { code?: unknown; driverError?: { code?: unknown } };
  const code = e.driverError?.code ?? e.code;
  return { type: e.constructor?.name ?? 'Error', message: e.message, ...(typeof code === 'string' ? { code } : {}), stack: e.stack };
}

export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'mpps' },
  serializers: { err: safeError, error: safeError },
  redact: {
    paths: ['req.headers["x-agent-key"]', 'req.headers["x-api-key"]', 'req.headers.authorization', 'apiKey', 'key', 'keyHash', 'key_hash', 'secret', 'password', '*.apiKey', '*.keyHash', '*.key_hash'],
    censor: '[redacted]',
  },
});

import { rows } from '../../db/queryRows';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';

/** One dependency's readiness: answered within the wait, and how long it took. */
export interface Check {
  ok: boolean;
  ms: number;
  error?: string;
}

const WAIT_MS = 2000;

async function timed(what: string, probe: () => Promise<unknown>): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not answer within ${WAIT_MS / 1000} s`)), WAIT_MS);
      }),
    ]);
    return { ok: true, ms: +(performance.now() - started).toFixed(1) };
  } catch (err) {
    return { ok: false, ms: +(performance.now() - started).toFixed(1), error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GET /health: the process answers (liveness), and Postgres and the queue backend answer a query
 * within 2 s (readiness). Not ready: 503 service_unavailable carrying the checks.
 */
export async function health(deps: Deps): Promise<{ status: 'ok'; postgres: Check; queues: Check & { backend: string } }> {
  const [postgres, queues] = await Promise.all([
    timed('Postgres', () => rows(deps.ds, 'SELECT 1')),
    timed('The queue backend', () => deps.hub.queue(deps.hub.allQueueNames()[0]).getWaitingCount()),
  ]);
  const checks = { postgres, queues: { ...queues, backend: deps.hub.backendKind } };
  if (!postgres.ok || !queues.ok) {
    const down = [postgres.ok ? null : postgres.error, queues.ok ? null : queues.error].filter(Boolean).join('; ');
    throw new DomainError('service_unavailable', `Not ready: ${down}.`, { status: 'unavailable', ...checks, retryAfter: 5 });
  }
  return { status: 'ok', ...checks };
}

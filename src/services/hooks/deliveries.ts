import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { classifyAnswer } from '../../domain/webhooks';
import { HookDelivery } from '../../entities/hooks';
import { DomainError } from '../../errors';
import { sendSigned, webhookBody } from './deliver';
import { hookOf } from './hooks';
import { firstRow, rows } from '../../db/queryRows';

/** An endpoint's delivery log, newest first, paged with `before` (a delivery id). */
export async function deliveriesOf(deps: Deps, actor: Principal, hookId: string, opts: { before?: string; limit: number }): Promise<HookDelivery[]> {
  const hook = await hookOf(deps, actor, hookId);
  const qb = deps.ds.getRepository(HookDelivery).createQueryBuilder('d').where('d.hook_id = :id', { id: hook.id });
  if (opts.before) qb.andWhere('d.id < :before', { before: opts.before });
  return qb.orderBy('d.id', 'DESC').limit(opts.limit).getMany();
}

async function logManual(deps: Deps, hookId: string, seq: string, type: string, r: Awaited<ReturnType<typeof sendSigned>>): Promise<HookDelivery> {
  const repo = deps.ds.getRepository(HookDelivery);
  return repo.save(
    repo.create({
      hookId,
      eventSeq: seq,
      eventType: type,
      attempt: 1,
      status: classifyAnswer(r.status),
      httpStatus: r.status,
      latencyMs: r.latencyMs,
      response: r.snippet,
      error: r.error,
      manual: true,
    }),
  );
}

/** Send one logged delivery's event again, now and out of band (the endpoint's order and cursor are untouched). */
export async function retryDelivery(deps: Deps, actor: Principal, hookId: string, deliveryId: string): Promise<HookDelivery> {
  const hook = await hookOf(deps, actor, hookId);
  const d = /^\d{1,18}$/.test(deliveryId) ? await deps.ds.getRepository(HookDelivery).findOneBy({ id: deliveryId, hookId: hook.id }) : null;
  if (!d) throw new DomainError('not_found', `No delivery ${deliveryId} of hook ${hookId} exists.`);
  if (d.eventType === 'webhook:test') return testHook(deps, actor, hook.id);
  const e = await firstRow<{ seq: string; type: string; workspace_id: string | null; data: Record<string, unknown>; created_at: Date }>(deps.ds, `SELECT seq::text AS seq, type, workspace_id, data, created_at FROM outbox WHERE seq = $1`, [d.eventSeq]);
  if (!e) throw new DomainError('not_found', `Event ${d.eventSeq} is no longer in the log (past its retention).`);
  const r = await sendSigned(deps, hook, e.seq, webhookBody({ id: e.seq, type: e.type, workspaceId: e.workspace_id, timestamp: e.created_at, data: e.data }));
  return logManual(deps, hook.id, e.seq, e.type, r);
}

/** A signed `webhook:test` message to the endpoint, now; its answer is logged and returned. */
export async function testHook(deps: Deps, actor: Principal, hookId: string): Promise<HookDelivery> {
  const hook = await hookOf(deps, actor, hookId);
  const id = `test_${randomUUID()}`;
  const r = await sendSigned(deps, hook, id, webhookBody({ id, type: 'webhook:test', workspaceId: hook.workspaceId, timestamp: new Date(), data: { hookId: hook.id } }));
  return logManual(deps, hook.id, '0', 'webhook:test', r);
}

/** Re-send every matching event after `after` (a seq), in order: the endpoint's cursor moves back, and its retry state clears. */
export async function replayHook(deps: Deps, actor: Principal, hookId: string, after: string): Promise<{ hookId: string; after: string; head: string }> {
  const hook = await hookOf(deps, actor, hookId);
  if (hook.disabledAt) throw new DomainError('conflict', 'The hook is disabled: enable it first (PATCH {enabled: true}).');
  // A run in progress would write its own cursor over this one: wait a little for it to let go.
  let row: { head: string } | undefined;
  for (let i = 0; i < 40 && !row; i++) {
    if (i) await new Promise((r) => setTimeout(r, 50));
    row = await firstRow<{ head: string }>(
      deps.ds,
      `WITH u AS (UPDATE hooks SET cursor_seq = LEAST(cursor_seq, $2::bigint), attempt = 0, next_attempt_at = NULL
                   WHERE id = $1 AND (lease_until IS NULL OR lease_until < now()) RETURNING id)
       SELECT (SELECT last_seq::text FROM event_sequencer WHERE id = 1) AS head FROM u`,
      [hook.id, after],
    );
  }
  if (!row) throw new DomainError('conflict', 'A delivery run to this endpoint is in progress; retry the replay in a few seconds.', { retryAfter: 2 });
  await deps.hub.enqueue('webhooks', 'deliver', { hookId: hook.id }, { jobId: `p-${hook.id}-${randomUUID()}`, removeOnComplete: true });
  return { hookId: hook.id, after, head: row.head };
}

/** Delete delivery log rows older than the retention (the events' purge age), in batches. */
export async function purgeDeliveries(deps: Deps, retentionDays: number): Promise<{ deliveries: number }> {
  const cutoff = new Date(deps.clock.now().getTime() - retentionDays * 86_400_000);
  let deliveries = 0;
  for (;;) {
    const [{ n }] = await rows<{ n: number }>(
      deps.ds,
      `WITH d AS (DELETE FROM hook_deliveries WHERE id IN (SELECT id FROM hook_deliveries WHERE created_at < $1 LIMIT 5000) RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [cutoff],
    );
    deliveries += n;
    if (n < 5000) break;
  }
  return { deliveries };
}

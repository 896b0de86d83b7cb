import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { poolPrepared } from '../../db/prepared';
import { classifyAnswer, eventMatches, nextRetryDelay, retryAfterMs, switchesOf, type AnswerClass, type Subscription } from '../../domain/webhooks';
import type { Hook } from '../../entities/hooks';
import { logger } from '../../logger';
import { readPolicyOf, visibleEvents, type ReadPolicy } from '../access';
import { emitEvent } from '../events';
import { signingSecrets } from './hooks';
import { postWebhook, type SendResult } from './send';
import { firstRow, rows } from '../../db/queryRows';

/** A delivering worker holds its endpoint this long past its last step (renewed on every delivery). */
const LEASE_MS = 30_000;
const BATCH = 200;
const FLUSH_EVERY = 50;
const LINGER_MS = 100;
const LINGER_POLL_MS = 5;

/** true once the log's head passes `head` within `ms` (polled: one primary-key read each time). */
async function headMovesWithin(deps: Deps, head: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, LINGER_POLL_MS));
    const r = await firstRow<{ moved: boolean }>(deps.ds, `SELECT last_seq > $1::bigint AS moved FROM event_sequencer WHERE id = 1`, [head]);
    if (r?.moved) return true;
  }
  return false;
}

interface LogRow {
  seq: string;
  type: string;
  workspace_id: string | null;
  agent_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

interface HookRow {
  id: string;
  workspace_id: string;
  agent_id: string;
  url: string;
  events: Subscription[];
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  cursor_seq: string;
  attempt: number;
  failing_since: Date | null;
  now: Date;
  /** The owner's notification switches, read with the claim, and the workspace's visibility. */
  notifications: Record<string, boolean> | null;
  ws_public: boolean;
  ws_owner: string;
}

/** What a receiver gets: the Standard Webhooks payload ({type, timestamp, data}) plus the event id and workspace. */
export function webhookBody(e: { id: string; type: string; workspaceId: string | null; timestamp: Date; data: Record<string, unknown> }): string {
  return JSON.stringify({ id: e.id, type: e.type, timestamp: e.timestamp.toISOString(), workspaceId: e.workspaceId, data: e.data });
}

const signers = new Map<string, Webhook>();
/** One decoded signer per secret (a small cache: secrets change only on rotation). */
function signerOf(secret: string): Webhook {
  let w = signers.get(secret);
  if (!w) {
    if (signers.size > 1000) signers.clear();
    signers.set(secret, (w = new Webhook(secret)));
  }
  return w;
}

/** Sign and send one message; during a rotation both secrets sign (space-separated signatures). */
export async function sendSigned(
  deps: Deps,
  hook: Pick<Hook, 'url' | 'secret' | 'previousSecret' | 'previousSecretUntil'>,
  msgId: string,
  body: string,
): Promise<SendResult> {
  const at = new Date();
  const signature = signingSecrets(hook, at)
    .map((s) => signerOf(s).sign(msgId, at, body))
    .join(' ');
  const headers = { 'webhook-id': msgId, 'webhook-timestamp': Math.floor(at.getTime() / 1000).toString(), 'webhook-signature': signature };
  return postWebhook(hook.url, headers, body, {
    allowHttp: deps.config.WEBHOOK_ALLOW_HTTP,
    allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE,
    timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
  });
}

const asHook = (h: HookRow) => ({ url: h.url, secret: h.secret, previousSecret: h.previous_secret, previousSecretUntil: h.previous_secret_until });

function logParams(hookId: string, seq: string, type: string, attempt: number, status: AnswerClass, r: SendResult, manual = false): unknown[] {
  return [hookId, seq, type, attempt, status, r.status, r.latencyMs, r.snippet, r.error, manual];
}
const LOG_INSERT = `INSERT INTO hook_deliveries (hook_id, event_seq, event_type, attempt, status, http_status, latency_ms, response, error, manual)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`;

async function claim(deps: Deps, hookId: string, token: string): Promise<HookRow | null> {
  const row = await firstRow<HookRow>(
    deps.ds,
    `WITH u AS (
       UPDATE hooks SET lease_until = now() + $3 * interval '1 millisecond', lease_token = $2
        WHERE id = $1 AND disabled_at IS NULL AND (lease_until IS NULL OR lease_until < now()) AND (next_attempt_at IS NULL OR next_attempt_at <= now())
        RETURNING *)
     SELECT u.*, u.cursor_seq::text AS cursor_seq, now() AS now, a.notifications, w.public AS ws_public, w.owner_id AS ws_owner
       FROM u JOIN agents a ON a.id = u.agent_id JOIN workspaces w ON w.id = u.workspace_id`,
    [hookId, token, LEASE_MS],
  );
  return row ?? null;
}

async function release(deps: Deps, hookId: string, token: string): Promise<void> {
  await deps.ds.query(`UPDATE hooks SET lease_until = NULL, lease_token = NULL WHERE id = $1 AND lease_token = $2`, [hookId, token]);
}

/** Work for an idle endpoint: events past its cursor, and no retry waiting. */
async function hasPending(deps: Deps, hookId: string): Promise<boolean> {
  const [r] = await rows<{ p: boolean }>(
    deps.ds,
    `SELECT EXISTS (SELECT 1 FROM hooks h WHERE h.id = $1 AND h.disabled_at IS NULL AND (h.lease_until IS NULL OR h.lease_until < now())
                      AND (h.next_attempt_at IS NULL OR h.next_attempt_at <= now())
                      AND EXISTS (SELECT 1 FROM outbox o WHERE o.workspace_id = h.workspace_id AND o.seq > h.cursor_seq)) AS p`,
    [hookId],
  );
  return r.p;
}

/**
 * Deliver an endpoint's events in log order, one at a time, until it is caught up or its head event
 * fails (later events then wait: head-of-line). One worker at a time per endpoint (a lease on its row).
 * After letting go, a last look for events that arrived meanwhile: a kick that found the lease held
 * relies on it.
 */
export async function drainHook(deps: Deps, hookId: string): Promise<{ delivered: number }> {
  const token = randomUUID();
  let delivered = 0;
  for (;;) {
    const hook = await claim(deps, hookId, token);
    if (!hook) return { delivered };
    let stop = false;
    let retry: Retry | undefined;
    try {
      const r = await deliverClaimed(deps, hook, token);
      delivered += r.delivered;
      stop = r.stop;
      retry = r.retry;
    } finally {
      await release(deps, hookId, token);
    }
    // Scheduled only now: a retry job that fired while this run held the lease would find it taken and do nothing.
    if (retry) {
      await deps.hub
        .enqueue('webhooks', 'deliver', { hookId }, { jobId: retry.jobId, delay: retry.delay, removeOnComplete: true })
        .catch((err) => logger.warn({ err, hookId }, 'could not schedule a webhook retry; the sweep will'));
    }
    if (stop || !(await hasPending(deps, hookId))) return { delivered };
  }
}

interface Retry {
  jobId: string;
  delay: number;
}

async function deliverClaimed(deps: Deps, hook: HookRow, token: string): Promise<{ delivered: number; stop: boolean; retry?: Retry }> {
  const policy = await ownerPolicy(deps, hook);
  if (!policy.reads) {
    // The owner left (or lost) the workspace: its events stop going out.
    await disable(deps, hook, 'The owner no longer belongs to the workspace.');
    return { delivered: 0, stop: true };
  }
  const switches = switchesOf(hook.notifications);
  const types = hook.events.map((s) => s.type);
  let cursor = hook.cursor_seq;
  let delivered = 0;
  // Successes are written in groups (log rows, cursor, lease renewal in one statement): a crash in
  // between re-sends them with the same webhook-id (at least once), never skips one.
  const done: Array<{ seq: string; type: string; attempt: number; r: SendResult }> = [];
  const flush = async (): Promise<boolean> => {
    if (!done.length) return true;
    const settled = done.splice(0);
    const [ok] = await rows<{ held: number; logged: number }>(
      deps.ds,
      `WITH l AS (INSERT INTO hook_deliveries (hook_id, event_seq, event_type, attempt, status, http_status, latency_ms, response)
                  SELECT $1, x.seq, x.type, x.attempt, 'delivered', x.http, x.ms, x.resp
                    FROM unnest($2::bigint[], $3::text[], $4::int[], $5::int[], $6::int[], $7::text[]) AS x(seq, type, attempt, http, ms, resp) RETURNING 1),
            u AS (UPDATE hooks SET cursor_seq = $8, attempt = 0, failing_since = NULL, next_attempt_at = NULL,
                                   lease_until = now() + $10 * interval '1 millisecond'
                   WHERE id = $1 AND lease_token = $9 RETURNING 1)
       SELECT (SELECT count(*) FROM u)::int AS held, (SELECT count(*) FROM l)::int AS logged`,
      [
        hook.id,
        settled.map((d) => d.seq),
        settled.map((d) => d.type),
        settled.map((d) => d.attempt),
        settled.map((d) => d.r.status),
        settled.map((d) => d.r.latencyMs),
        settled.map((d) => d.r.snippet),
        settled[settled.length - 1].seq,
        token,
        LEASE_MS,
      ],
    );
    return ok.held > 0; // false: the lease went to another worker
  };
  for (;;) {
    // Visible seqs are always a prefix of the log (the sequencer commits in order), so after a short
    // page the endpoint has settled everything up to the head read in the same snapshot.
    // json_agg answers the page as JSON: its timestamps come back as strings.
    const [page] = await rows<{ head: string; events: Array<Omit<LogRow, 'created_at'> & { created_at: string }> }>(
      deps.ds,
      `SELECT (SELECT last_seq::text FROM event_sequencer WHERE id = 1) AS head,
              coalesce((SELECT json_agg(e ORDER BY e.seq::bigint) FROM (
                 SELECT seq::text AS seq, type, workspace_id, agent_id, data, created_at FROM outbox
                  WHERE workspace_id = $1 AND seq > $2 AND type = ANY($3::text[]) AND (agent_id IS NULL OR agent_id = $4)
                  ORDER BY outbox.seq LIMIT $5) e), '[]'::json) AS events`,
      [hook.workspace_id, cursor, types, hook.agent_id, BATCH],
    );
    const events = page.events.map((e) => ({ ...e, created_at: new Date(e.created_at) }));
    // What the owner may not read (a hidden metric's books) is skipped like an unsubscribed type.
    const policies = new Map([[hook.workspace_id, policy]]);
    const visible = new Set((await visibleEvents(deps, policies, events.map((e) => ({ seq: e.seq, workspaceId: e.workspace_id, data: e.data })))).map((e) => e.seq));
    for (const e of events) {
      if (!visible.has(e.seq) || !eventMatches(hook.events, switches, hook.agent_id, { type: e.type, data: e.data, agentId: e.agent_id })) {
        cursor = e.seq;
        continue;
      }
      const attempt = hook.attempt + 1;
      const body = webhookBody({ id: e.seq, type: e.type, workspaceId: e.workspace_id, timestamp: e.created_at, data: e.data });
      const r = await sendSigned(deps, asHook(hook), e.seq, body);
      const cls = classifyAnswer(r.status);
      if (cls === 'delivered') {
        done.push({ seq: e.seq, type: e.type, attempt, r });
        hook.attempt = 0;
        hook.failing_since = null;
        cursor = e.seq;
        delivered++;
        if (done.length >= FLUSH_EVERY && !(await flush())) return { delivered, stop: true };
        continue;
      }
      if (!(await flush())) return { delivered, stop: true };
      const retry = await failed(deps, hook, e, attempt, cls, r);
      return { delivered, stop: true, retry };
    }
    if (!(await flush())) return { delivered, stop: true };
    if (events.length < BATCH) {
      if (BigInt(page.head) > BigInt(cursor)) cursor = page.head;
      await deps.ds.query(`UPDATE hooks SET cursor_seq = $2 WHERE id = $1 AND lease_token = $3 AND cursor_seq < $2`, [hook.id, cursor, token]);
      // An endpoint that just got events likely gets more soon: watch the log's head for a moment
      // instead of waiting for a kick. Then hand back to drainHook, which claims again: the claim
      // renews the lease and re-checks the owner's read, so a busy log never keeps one run (and
      // an expiring lease) going, nor sends to an owner that lost read meanwhile.
      if (delivered) await headMovesWithin(deps, page.head, LINGER_MS);
      return { delivered, stop: false };
    }
    await deps.ds.query(`UPDATE hooks SET cursor_seq = $2 WHERE id = $1 AND lease_token = $3 AND cursor_seq < $2`, [hook.id, cursor, token]);
  }
}

/** The head event failed: disable (410, or failing for too long), or schedule its next attempt; later events wait. */
async function failed(deps: Deps, hook: HookRow, e: { seq: string; type: string }, attempt: number, cls: AnswerClass, r: SendResult): Promise<Retry | undefined> {
  const since = hook.failing_since ?? hook.now;
  const tooLong = hook.now.getTime() - new Date(since).getTime() >= deps.config.WEBHOOK_DISABLE_AFTER_MS;
  if (cls === 'gone' || tooLong) {
    const reason = cls === 'gone' ? 'The endpoint answered 410 Gone.' : `The endpoint kept failing since ${new Date(since).toISOString()}.`;
    await disable(deps, hook, reason, { attempt, log: logParams(hook.id, e.seq, e.type, attempt, cls, r) });
    return undefined;
  }
  const honoured = cls === 'backoff' ? retryAfterMs(r.retryAfter, new Date()) : null;
  const scheduled = nextRetryDelay(attempt, deps.config.WEBHOOK_RETRY_SCALE);
  // Schedule spent for this event: it is given up (replay or retry re-sends it) and the next one starts afresh.
  const giveUp = scheduled === null && honoured === null;
  const delay = honoured ?? scheduled ?? 0;
  await deps.ds.query(
    `WITH l AS (${LOG_INSERT})
     UPDATE hooks SET failing_since = coalesce(failing_since, now()), attempt = $11,
                      cursor_seq = CASE WHEN $12 THEN $2 ELSE cursor_seq END,
                      next_attempt_at = now() + $13 * interval '1 millisecond'
      WHERE id = $1`,
    [...logParams(hook.id, e.seq, e.type, attempt, cls, r), giveUp ? 0 : attempt, giveUp, delay],
  );
  return { jobId: `r-${hook.id}-${e.seq}-${attempt}`, delay };
}

/** What the hook's owner may read in its workspace now (its groups, as a request would be judged). */
function ownerPolicy(deps: Deps, hook: HookRow): Promise<ReadPolicy> {
  return readPolicyOf(deps, { agentId: hook.agent_id, isMaster: false, scopes: null }, { id: hook.workspace_id, public: hook.ws_public, ownerId: hook.ws_owner });
}

/** Disable an endpoint and tell its owner (endpoint:disabled), with the attempt that did it, in one transaction. */
async function disable(deps: Deps, hook: HookRow, reason: string, last?: { attempt: number; log: unknown[] }): Promise<void> {
  await inTransaction(deps.ds, async (m) => {
    if (last) await m.query(LOG_INSERT, last.log);
    await m.query(
      `UPDATE hooks SET disabled_at = now(), disabled_reason = $2, failing_since = coalesce(failing_since, now()), attempt = $3, next_attempt_at = NULL WHERE id = $1`,
      [hook.id, reason, last?.attempt ?? hook.attempt],
    );
    await emitEvent(m, hook.workspace_id, 'endpoint:disabled', { hookId: hook.id, url: hook.url, reason }, hook.agent_id);
  });
  logger.warn({ hookId: hook.id, reason }, 'webhook endpoint disabled');
}

/**
 * Enqueue a delivery run for every idle endpoint of these workspaces (after a sequencer pass). Only
 * this instance's endpoints (QUEUE_PREFIX): instances sharing a database deliver their own, with their own policy.
 */
export async function kickHooks(deps: Deps, workspaceIds: string[], tag: string): Promise<number> {
  if (!workspaceIds.length) return 0;
  const rows = await poolPrepared<{ id: string }>(
    deps.ds,
    `SELECT id FROM hooks WHERE workspace_id = ANY($1::uuid[]) AND instance = $2 AND disabled_at IS NULL
        AND (lease_until IS NULL OR lease_until < now()) AND (next_attempt_at IS NULL OR next_attempt_at <= now())`,
    [workspaceIds, deps.config.QUEUE_PREFIX],
  );
  await Promise.all(rows.map((h) => deps.hub.enqueue('webhooks', 'deliver', { hookId: h.id }, { jobId: `k-${h.id}-${tag}`, removeOnComplete: true })));
  return rows.length;
}

/**
 * Every idle endpoint with work (events past its cursor, or a retry due) gets a run: the backstop for
 * a job lost with Redis, since the log and the cursors live in Postgres.
 */
export async function sweepHooks(deps: Deps, tag: string): Promise<number> {
  const rows: Array<{ id: string }> = await deps.ds.query(
    `SELECT h.id FROM hooks h WHERE h.instance = $1 AND h.disabled_at IS NULL AND (h.lease_until IS NULL OR h.lease_until < now())
        AND (h.next_attempt_at IS NULL OR h.next_attempt_at <= now())
        AND (h.next_attempt_at IS NOT NULL OR EXISTS (SELECT 1 FROM outbox o WHERE o.workspace_id = h.workspace_id AND o.seq > h.cursor_seq))`,
    [deps.config.QUEUE_PREFIX],
  );
  await Promise.all(rows.map((h) => deps.hub.enqueue('webhooks', 'deliver', { hookId: h.id }, { jobId: `s-${h.id}-${tag}`, removeOnComplete: true })));
  return rows.length;
}

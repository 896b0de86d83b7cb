import { performance } from 'node:perf_hooks';
import type { EntityManager } from 'typeorm';
import { inTransaction } from '../../db/tx';
import type { Deps } from '../../deps';
import { rowReader, type Row } from '../../db/rows';
import { firstRow, rows } from '../../db/queryRows';
import { Deletion } from '../../entities/deletion';
import { conflict, DomainError } from '../../errors';
import { logger } from '../../logger';
import { revokeKeysOfAgent } from '../identity';
import { markWorkspaceDeleting } from '../workspaces';
import { DEFAULT_LIMITS, PARTICIPANT_PHASES, settleParticipantCredits, WORKSPACE_PHASES, type Limits, type Phase } from './phases';

/**
 * Large deletions (issue 26 item 3): the request marks the target (a workspace stops resolving, a
 * participant's keys are revoked and its credits moved) and records a deletion row in one short
 * transaction; the `deletions` job then runs the phases in batches, each batch its own transaction
 * with its progress, so no transaction grows with the target's history and a killed job resumes
 * where the last commit left it.
 */
const PHASES: Record<Deletion['kind'], Phase[]> = { workspace: WORKSPACE_PHASES, participant: PARTICIPANT_PHASES };

/** A deletion as it is shown: the table's row (the entity's columns) with its phase named and its progress summed. */
export type DeletionRow = Omit<Row<Deletion>, 'phase'> & { phase: string | null; done: number; total: number };

const readDeletion = rowReader(Deletion);

function toRow(raw: Record<string, unknown>): DeletionRow {
  const r = readDeletion(raw);
  const names = PHASES[r.kind].map((p) => p.name);
  return {
    ...r,
    phase: r.state === 'done' ? null : (names[r.phase] ?? null),
    phases: r.phases.length ? r.phases : names.map((name) => ({ name, done: 0, total: 0 })),
    done: r.phases.reduce((s, p) => s + p.done, 0),
    total: r.phases.reduce((s, p) => s + p.total, 0),
  };
}

/** The unfinished deletion of a target, else a new one (queued), in the caller's transaction. */
async function recordDeletion(m: EntityManager, kind: Deletion['kind'], targetId: string, targetName: string, requestedBy: string, now: Date): Promise<DeletionRow> {
  await m.query(
    `INSERT INTO deletions (kind, target_id, target_name, requested_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (kind, target_id) WHERE state <> 'done' DO NOTHING`,
    [kind, targetId, targetName, requestedBy, now],
  );
  const [r] = await rows<Record<string, unknown>>(m, `SELECT * FROM deletions WHERE kind = $1 AND target_id = $2 AND state <> 'done'`, [kind, targetId]);
  return toRow(r);
}

/** The job that runs a deletion; a failed enqueue is not fatal: the minute sweep enqueues it. */
async function enqueueDeletion(deps: Deps, id: string, jobId = `deletion-${id}`): Promise<void> {
  await deps.hub
    .enqueue('deletions', 'run', { deletionId: id }, { jobId, attempts: 5, backoff: { type: 'exponential', delay: 1000 } })
    .catch((err: unknown) => logger.warn({ err, deletionId: id }, 'deletion job not enqueued; the sweep will'));
}

/**
 * DELETE /workspaces/{id}: from this commit on the workspace resolves to nothing (reads 404, writes
 * refused); its books are refunded and its rows deleted by the job. A second request while it runs
 * answers the same deletion.
 */
export async function requestWorkspaceDeletion(deps: Deps, workspaceId: string, requestedBy: string): Promise<DeletionRow> {
  const now = deps.clock.now();
  const d = await inTransaction(deps.ds, async (m) => {
    const ws = await firstRow<{ id: string; slug: string }>(m, `SELECT id, slug FROM workspaces WHERE id = $1 FOR UPDATE`, [workspaceId]);
    if (!ws) throw new DomainError('workspace_not_found', `No workspace "${workspaceId}" exists.`);
    await markWorkspaceDeleting(m, workspaceId, now);
    return recordDeletion(m, 'workspace', workspaceId, ws.slug, requestedBy, now);
  });
  await enqueueDeletion(deps, d.id);
  return d;
}

/**
 * DELETE /agents/{id}, once authorized: in one transaction the participant (locked) has its open
 * orders cancelled, its whole balance moved to its heir and its keys revoked; the job deletes its
 * trades and positions in batches and then the row. 409 while it owns a workspace.
 */
export async function requestParticipantDeletion(deps: Deps, id: string, requestedBy: string) {
  const now = deps.clock.now();
  const out = await inTransaction(deps.ds, async (m) => {
    const locked = await rows<{ id: string; nickname: string | null }>(m, `SELECT id, nickname FROM agents WHERE id = $1 FOR UPDATE`, [id]);
    if (!locked.length) throw new DomainError('not_found', `Participant "${id}" was not found.`);
    const owned = await rows<{ slug: string }>(m, `SELECT slug FROM workspaces WHERE owner_id = $1 ORDER BY created_at LIMIT 5`, [id]);
    if (owned.length) {
      throw conflict(`This participant owns workspace${owned.length > 1 ? 's' : ''} ${owned.map((w) => w.slug).join(', ')}; delete ${owned.length > 1 ? 'them' : 'it'} first.`, {
        workspaces: owned.map((w) => w.slug),
      });
    }
    const moved = await settleParticipantCredits(m, id, now);
    await revokeKeysOfAgent(m, id, now);
    const deletion = await recordDeletion(m, 'participant', id, locked[0].nickname ?? id, requestedBy, now);
    return { ok: true as const, agentId: id, creditsReturned: moved.amount, returnedTo: moved.to, deletion };
  });
  await enqueueDeletion(deps, out.deletion.id);
  return out;
}

/** How long, at most, one batch of this run took (ms), and how many batches and rows it did. */
export interface RunReport {
  batches: number;
  rows: number;
}

/**
 * Run a deletion's batches until it is done (or `maxBatches` ran: a test stopping it between
 * batches). Each batch locks the deletion row first, so two runners (a stalled job and its retry)
 * take turns and each continues from the other's last commit.
 */
export async function runDeletion(deps: Deps, id: string, opts: { limits?: Limits; maxBatches?: number } = {}): Promise<RunReport> {
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const report: RunReport = { batches: 0, rows: 0 };
  for (;;) {
    if (opts.maxBatches !== undefined && report.batches >= opts.maxBatches) return report;
    const step = await inTransaction(deps.ds, async (m) => {
      const started = performance.now();
      const [raw]: Array<Record<string, unknown>> = await m.query(`SELECT * FROM deletions WHERE id = $1 FOR UPDATE`, [id]);
      const d = raw && readDeletion(raw);
      if (!d || d.state === 'done') return { finished: true, rows: 0 };
      const phases = PHASES[d.kind];
      const now = deps.clock.now();
      let progress = d.phases;
      let rows = 0;
      let phase = d.phase;
      if (!progress.length) {
        // The first batch counts what there is to do (the totals the progress is read against).
        progress = [];
        for (const p of phases) progress.push({ name: p.name, done: 0, total: await p.count(m, d.targetId) });
      } else if (phase < phases.length) {
        rows = await phases[phase].step(m, d.targetId, now, limits);
        const cur = progress[phase];
        cur.done += rows;
        cur.longestBatchMs = Math.max(cur.longestBatchMs ?? 0, Math.ceil(performance.now() - started));
        cur.total = Math.max(cur.total, cur.done);
        if (rows === 0) phase += 1;
      }
      const finished = phase >= phases.length;
      const ms = Math.ceil(performance.now() - started);
      await m.query(
        `UPDATE deletions SET state = $2, phase = $3, phases = $4, batches = batches + 1, longest_batch_ms = greatest(longest_batch_ms, $5),
                error = NULL, updated_at = $6, finished_at = CASE WHEN $2 = 'done' THEN $6::timestamptz END WHERE id = $1`,
        [id, finished ? 'done' : 'running', phase, JSON.stringify(progress), ms, now],
      );
      return { finished, rows };
    });
    report.batches += 1;
    report.rows += step.rows;
    if (step.finished) return report;
  }
}

/** A run's last attempt failed: recorded (the sweep tries again a minute later). */
export async function markDeletionFailed(deps: Deps, id: string, err: unknown): Promise<void> {
  const message = err instanceof Error ? err.message : String(err);
  await deps.ds.query(`UPDATE deletions SET state = 'failed', error = $2, updated_at = $3 WHERE id = $1 AND state <> 'done'`, [id, message.slice(0, 500), deps.clock.now()]);
}

/** The minute sweep: every unfinished deletion untouched for a minute (its job lost, or failed) gets a job again. */
export async function sweepDeletions(deps: Deps): Promise<{ enqueued: number }> {
  const now = deps.clock.now();
  const rows: Array<{ id: string }> = await deps.ds.query(
    `SELECT id FROM deletions WHERE state <> 'done' AND updated_at < $1::timestamptz - interval '60 seconds' ORDER BY updated_at LIMIT 100`,
    [now],
  );
  for (const r of rows) await enqueueDeletion(deps, r.id, `deletion-${r.id}-${Math.floor(now.getTime() / 60_000)}`);
  return { enqueued: rows.length };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** GET /deletions/{id}: its requester and the master key see it; anyone else gets 404. */
export async function deletionFor(deps: Deps, caller: { agentId: string; isMaster: boolean }, id: string): Promise<DeletionRow> {
  const r = UUID_RE.test(id) ? await firstRow<Record<string, unknown>>(deps.ds, `SELECT * FROM deletions WHERE id = $1`, [id]) : undefined;
  if (!r || (!caller.isMaster && r.requested_by !== caller.agentId)) throw new DomainError('not_found', `Deletion "${id}" was not found.`);
  return toRow(r);
}

/** The unfinished deletion of a workspace named by id or slug, if it is being deleted (for the 404's sentence). */
export async function deletionOfWorkspace(deps: Deps, idOrSlug: string): Promise<string | null> {
  const r = await firstRow<{ id: string }>(
    deps.ds,
    `SELECT d.id FROM workspaces w JOIN deletions d ON d.kind = 'workspace' AND d.target_id = w.id::text AND d.state <> 'done'
      WHERE w.deleting_at IS NOT NULL AND (w.id::text = $1 OR lower(w.slug) = lower($1)) LIMIT 1`,
    [idOrSlug],
  );
  return r?.id ?? null;
}

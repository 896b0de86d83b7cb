import type { Deps } from '../../deps';
import { rowReader, type Row } from '../../db/rows';
import { FeedbackEntry } from '../../entities/feedback';

/** A report (the entity's columns) with its sender's nickname. */
export type FeedbackRow = Row<FeedbackEntry> & { nickname: string | null };

type Raw = Record<string, unknown>;
const readFeedback = rowReader(FeedbackEntry);
const toRow = (r: Raw): FeedbackRow => ({ ...readFeedback(r), nickname: (r.nickname as string | null) ?? null });

/** Store one report with who sent it (and the workspace and request it came with). */
export async function submitFeedback(
  deps: Pick<Deps, 'ds' | 'clock'>,
  input: { agentId: string; workspaceId: string | null; message: string; context: Record<string, unknown> | null; requestId: string | null },
): Promise<FeedbackRow> {
  const rows: Raw[] = await deps.ds.query(
    `WITH ins AS (
       INSERT INTO feedback (agent_id, workspace_id, message, context, request_id, created_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6) RETURNING *)
     SELECT ins.*, a.nickname FROM ins LEFT JOIN agents a ON a.id = ins.agent_id`,
    [input.agentId, input.workspaceId, input.message, input.context === null ? null : JSON.stringify(input.context), input.requestId, deps.clock.now()],
  );
  return toRow(rows[0]);
}

/** Reports newest first, for the platform operator; `before` is the id of the last report of the previous page. */
export async function listFeedback(deps: Pick<Deps, 'ds'>, opts: { limit: number; before?: string; agentId?: string }): Promise<{ rows: FeedbackRow[]; total: number }> {
  const rows: Raw[] = await deps.ds.query(
    `SELECT f.*, a.nickname, count(*) OVER () AS total FROM feedback f LEFT JOIN agents a ON a.id = f.agent_id
      WHERE ($2::bigint IS NULL OR f.id < $2::bigint) AND ($3::text IS NULL OR f.agent_id = $3)
      ORDER BY f.id DESC LIMIT $1`,
    [opts.limit, opts.before ?? null, opts.agentId ?? null],
  );
  return { rows: rows.map(toRow), total: rows.length ? Number(rows[0].total) : 0 };
}

import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { rowReader, type Row } from '../../db/rows';
import { DataRoomAction } from '../../entities/dataRoom';
import { readableRows } from '../access';

/**
 * The data room: the public, append-only log of a workspace's acts (spec §4.4). Its rows are written
 * by triggers in the act's own transaction (migrations 1764109857000-DataRoomLog) with the names as
 * they were then, so deleting or renaming a metric, proposal or book changes none of them; only the
 * workspace's own deletion removes them. Newest first, paginated by an opaque cursor (the
 * microsecond instant and the row's key of the last row handed out).
 */
export type ActionKind = DataRoomAction['kind'];

/** A row of the log (the entity's columns: metric fields' old and new text as fromText/toText, a reading's, a decision's, a book's) and its page cursor. */
export type ActionRow = Row<DataRoomAction> & { cursor: string };

export interface ActionPage {
  actions: ActionRow[];
  nextCursor: string | null;
}

const ACTIONS_SQL = `
SELECT a.*
  FROM data_room_actions a
 WHERE a.workspace_id = $1
   AND ($2::bigint IS NULL OR (a.us, a.key) < ($2::bigint, $3::text))
   AND ($5::text[] IS NULL OR a.kind = ANY($5::text[]))
 ORDER BY a.us DESC, a.key DESC
 LIMIT $4`;

const encodeCursor = (us: string, key: string) => Buffer.from(`${us}|${key}`, 'utf8').toString('base64url');

function decodeCursor(cursor: string): { us: string; key: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^(\d{1,20})\|([a-z]+:[0-9a-f-]{1,40})$/.exec(text);
  if (!m) throw new DomainError('validation_failed', 'The cursor is not one this endpoint handed out; pass nextCursor of the previous page as it came.');
  return { us: m[1], key: m[2] };
}

type Raw = Record<string, unknown>;
const readAction = rowReader(DataRoomAction);

function toRow(r: Raw): ActionRow {
  const row = readAction(r);
  return { ...row, cursor: encodeCursor(row.us, row.key) };
}

/**
 * One page of the workspace's acts, newest first. `reader` leaves out rows about metrics the caller
 * may not read (spec §2.10) and decisions on proposals hidden with their metrics (issue 65); the page
 * is filled from further rows so it still holds `limit` rows while there are any.
 */
export async function workspaceActions(
  deps: Pick<Deps, 'ds'>,
  input: { workspaceId: string; limit: number; cursor?: string; kinds?: ActionKind[]; reader?: Parameters<typeof readableRows>[1] },
): Promise<ActionPage> {
  let after = input.cursor ? decodeCursor(input.cursor) : null;
  const out: ActionRow[] = [];
  for (;;) {
    const want = input.limit - out.length;
    const raw: Raw[] = await deps.ds.query(ACTIONS_SQL, [input.workspaceId, after?.us ?? null, after?.key ?? null, want + 1, input.kinds?.length ? input.kinds : null]);
    const rows = raw.map(toRow);
    const more = rows.length > want;
    out.push(...(input.reader ? await readableRows(deps, input.reader, rows.slice(0, want)) : rows.slice(0, want)));
    const last = rows[Math.min(rows.length, want) - 1];
    if (!more) return { actions: out, nextCursor: null };
    if (out.length >= input.limit) return { actions: out, nextCursor: out[out.length - 1].cursor };
    after = decodeCursor(last.cursor);
  }
}

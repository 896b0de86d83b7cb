import type { Deps } from '../../deps';
import { DomainError } from '../../errors';

/**
 * The data room: the public, append-only log of a workspace's acts (spec §4.4). Its rows are written
 * by triggers in the act's own transaction (migrations 1764109857000-DataRoomLog) with the names as
 * they were then, so deleting or renaming a metric, proposal or book changes none of them; only the
 * workspace's own deletion removes them. Newest first, paginated by an opaque cursor (the
 * microsecond instant and the row's key of the last row handed out).
 */
export type ActionKind = 'metric' | 'reading' | 'proposal' | 'settlement' | 'void';

export interface ActionRow {
  /** `<kind>:<id of the underlying row>`: stable, unique in the workspace. */
  key: string;
  kind: ActionKind;
  at: Date;
  agentId: string | null;
  metricId: string | null;
  metricName: string | null;
  /** metric: the field and its old and new text. */
  field: 'name' | 'description' | null;
  from: string | null;
  to: string | null;
  /** reading: the value filed (null with na), its asOf and note. */
  oldValue: number | null;
  value: number | null;
  na: boolean;
  asOf: Date | null;
  note: string | null;
  /** proposal: the decision. */
  proposalId: string | null;
  title: string | null;
  decision: string | null;
  spam: boolean;
  /** settlement and void: the book. */
  marketId: string | null;
  targetDate: string | null;
  branch: string | null;
  settledEarly: boolean;
  reason: string | null;
  cursor: string;
}

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
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const text = (v: unknown) => (v === null || v === undefined ? null : String(v));

function toRow(r: Raw): ActionRow {
  return {
    key: String(r.key),
    kind: r.kind as ActionKind,
    at: new Date(r.at as string),
    agentId: text(r.agent_id),
    metricId: text(r.metric_id),
    metricName: text(r.metric_name),
    field: (r.field as 'name' | 'description' | null) ?? null,
    from: text(r.from_text),
    to: text(r.to_text),
    oldValue: num(r.old_value),
    value: num(r.value),
    na: r.na === true,
    asOf: r.as_of ? new Date(r.as_of as string) : null,
    note: text(r.note),
    proposalId: text(r.proposal_id),
    title: text(r.title),
    decision: text(r.decision),
    spam: r.spam === true,
    marketId: text(r.market_id),
    targetDate: text(r.target_date),
    branch: text(r.branch),
    settledEarly: r.settled_early === true,
    reason: text(r.reason),
    cursor: encodeCursor(String(r.us), String(r.key)),
  };
}

/**
 * One page of the workspace's acts, newest first. `metricReadable` leaves out rows about metrics the
 * caller may not read (spec §2.10); the page is filled from further rows so it still holds `limit`
 * rows while there are any.
 */
export async function workspaceActions(
  deps: Pick<Deps, 'ds'>,
  input: { workspaceId: string; limit: number; cursor?: string; kinds?: ActionKind[]; metricReadable?: (metricId: string) => boolean },
): Promise<ActionPage> {
  let after = input.cursor ? decodeCursor(input.cursor) : null;
  const out: ActionRow[] = [];
  for (;;) {
    const want = input.limit - out.length;
    const raw: Raw[] = await deps.ds.query(ACTIONS_SQL, [input.workspaceId, after?.us ?? null, after?.key ?? null, want + 1, input.kinds?.length ? input.kinds : null]);
    const rows = raw.map(toRow);
    const more = rows.length > want;
    for (const row of rows.slice(0, want)) {
      if (!row.metricId || !input.metricReadable || input.metricReadable(row.metricId)) out.push(row);
    }
    const last = rows[Math.min(rows.length, want) - 1];
    if (!more) return { actions: out, nextCursor: null };
    if (out.length >= input.limit) return { actions: out, nextCursor: out[out.length - 1].cursor };
    after = decodeCursor(last.cursor);
  }
}

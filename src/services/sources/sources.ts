import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { rowReader, type Row } from '../../db/rows';
import { Source } from '../../entities/source';
import { DomainError, notFound } from '../../errors';
import { checkRef, isRepository } from './paths';
import { encryptToken } from './secrets';
import { firstRow, rows } from '../../db/queryRows';

export const SOURCE_TYPES = ['text', 'github'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];
/** The largest text a text source holds (UTF-8 bytes). */
export const MAX_TEXT_BYTES = 1_048_576;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the bridge needs: the row (the entity's columns; the text's size, not the text) plus the encrypted token (never leaves the services). */
export type SourceRecord = Omit<Row<Source>, 'content'> & {
  /** Bytes of text (type text), else null. */
  contentBytes: number | null;
  hasToken: boolean;
};
export type SourceRow = Omit<SourceRecord, 'tokenEnc'>;

type Raw = Record<string, unknown>;
const COLUMNS = `id, workspace_id, name, type, description, octet_length(content) AS content_bytes, repository, default_ref, token_enc, created_by, created_at, updated_at`;
const readSource = rowReader(Source);

const toRecord = (r: Raw): SourceRecord => {
  const { content: _content, ...row } = readSource(r);
  return { ...row, contentBytes: r.content_bytes === null || r.content_bytes === undefined ? null : Number(r.content_bytes), hasToken: row.tokenEnc !== null };
};

/** The public row (the token stays behind). */
export function sourceRow(r: SourceRecord): SourceRow {
  const { tokenEnc: _t, ...row } = r;
  return row;
}

function checkText(content: string): void {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > MAX_TEXT_BYTES) throw new DomainError('validation_failed', `A text source holds at most 1 MB (${MAX_TEXT_BYTES} bytes of UTF-8); this is ${bytes}.`, { bytes, limit: MAX_TEXT_BYTES });
}

function checkRepository(repo: string): void {
  if (!isRepository(repo)) throw new DomainError('validation_failed', `repository must be owner/name as the host spells them, got "${repo.slice(0, 200)}".`);
}

export interface SourceInput {
  name: string;
  type: SourceType;
  description?: string;
  content?: string;
  repository?: string;
  defaultRef?: string;
  token?: string;
}

/** Create a source (manage). A text source needs content; a github source needs repository; a token needs SOURCE_TOKEN_KEY. */
export async function createSource(deps: Pick<Deps, 'ds' | 'clock' | 'config'>, input: SourceInput & { workspaceId: string; agentId: string }): Promise<SourceRow> {
  if (input.type === 'text') {
    if (input.content === undefined) throw new DomainError('validation_failed', 'A text source needs content (markdown, at most 1 MB).');
    if (input.repository !== undefined || input.token !== undefined || input.defaultRef !== undefined) {
      throw new DomainError('validation_failed', 'repository, defaultRef and token belong to github sources; a text source holds content only.');
    }
    checkText(input.content);
  } else {
    if (!input.repository) throw new DomainError('validation_failed', 'A github source needs repository (owner/name).');
    if (input.content !== undefined) throw new DomainError('validation_failed', 'A github source reads its repository; content belongs to text sources.');
    checkRepository(input.repository);
    if (input.defaultRef !== undefined) checkRef(input.defaultRef);
  }
  const tokenEnc = input.token ? encryptToken(input.token, deps.config.SOURCE_TOKEN_KEY) : null;
  const now = deps.clock.now();
  const rows: Raw[] = await deps.ds.query(
    `INSERT INTO sources (workspace_id, name, type, description, content, repository, default_ref, token_enc, created_by, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING ${COLUMNS}`,
    [input.workspaceId, input.name, input.type, input.description ?? '', input.content ?? null, input.repository ?? null, input.defaultRef ?? null, tokenEnc, input.agentId, now],
  );
  return sourceRow(toRecord(rows[0]));
}

export async function listSources(deps: Pick<Deps, 'ds'>, workspaceId: string): Promise<SourceRow[]> {
  const rows: Raw[] = await deps.ds.query(`SELECT ${COLUMNS} FROM sources WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId]);
  return rows.map((r) => sourceRow(toRecord(r)));
}

export async function sourceRecord(deps: Pick<Deps, 'ds'>, workspaceId: string, id: string): Promise<SourceRecord> {
  return recordIn(deps.ds, workspaceId, id, false);
}

/** The source read in `q` (a transaction's manager when `lock`: the row stays locked until it commits). */
async function recordIn(q: Pick<EntityManager, 'query'>, workspaceId: string, id: string, lock: boolean): Promise<SourceRecord> {
  const row = UUID_RE.test(id) ? await firstRow<Raw>(q, `SELECT ${COLUMNS} FROM sources WHERE workspace_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [workspaceId, id]) : undefined;
  if (!row) throw notFound(`Source ${id}`);
  return toRecord(row);
}

export async function getSource(deps: Pick<Deps, 'ds'>, workspaceId: string, id: string): Promise<SourceRow> {
  return sourceRow(await sourceRecord(deps, workspaceId, id));
}

/**
 * Change a source's fields (type is fixed). token: a string replaces it, null removes it. The bridge's
 * cache of the source is dropped (another repository, ref or token may answer differently).
 */
export async function updateSource(
  deps: Pick<Deps, 'ds' | 'clock' | 'config'>,
  workspaceId: string,
  id: string,
  patch: { name?: string; description?: string; content?: string; repository?: string; defaultRef?: string | null; token?: string | null },
): Promise<SourceRow> {
  return inTransaction(deps.ds, async (m) => {
    const current = await recordIn(m, workspaceId, id, true);
    if (current.type === 'text') {
      if (patch.repository !== undefined || patch.defaultRef !== undefined || patch.token !== undefined) {
        throw new DomainError('validation_failed', 'repository, defaultRef and token belong to github sources; a text source holds content only.');
      }
      if (patch.content !== undefined) checkText(patch.content);
    } else {
      if (patch.content !== undefined) throw new DomainError('validation_failed', 'A github source reads its repository; content belongs to text sources.');
      if (patch.repository !== undefined) checkRepository(patch.repository);
      if (typeof patch.defaultRef === 'string') checkRef(patch.defaultRef);
    }
    const tokenEnc = patch.token === undefined ? current.tokenEnc : patch.token === null ? null : encryptToken(patch.token, deps.config.SOURCE_TOKEN_KEY);
    // One transaction: the row read locked, its update and the bridge cache's drop commit together.
    // An UPDATE answers [rows, count] through TypeORM.
    const [rows]: [Raw[], number] = await m.query(
      `UPDATE sources SET name = $3, description = $4, content = CASE WHEN $5::boolean THEN $6 ELSE content END, repository = $7, default_ref = $8, token_enc = $9, updated_at = $10
        WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [
        workspaceId,
        id,
        patch.name ?? current.name,
        patch.description ?? current.description,
        patch.content !== undefined,
        patch.content ?? null,
        patch.repository ?? current.repository,
        patch.defaultRef === undefined ? current.defaultRef : patch.defaultRef,
        tokenEnc,
        deps.clock.now(),
      ],
    );
    await m.query(`DELETE FROM source_cache WHERE source_id = $1`, [id]);
    return sourceRow(toRecord(rows[0]));
  });
}

export async function deleteSource(deps: Pick<Deps, 'ds'>, workspaceId: string, id: string): Promise<void> {
  const res: [unknown[], number] = await deps.ds.query(`DELETE FROM sources WHERE workspace_id = $1 AND id = $2::uuid`, [workspaceId, (await sourceRecord(deps, workspaceId, id)).id]);
  if (!res[1]) throw notFound(`Source ${id}`);
}

/** A text source's markdown. */
export async function sourceText(deps: Pick<Deps, 'ds'>, workspaceId: string, id: string): Promise<{ source: SourceRow; content: string }> {
  const src = await sourceRecord(deps, workspaceId, id);
  if (src.type !== 'text') throw new DomainError('validation_failed', `Source ${id} is a github source; browse it with /sources/${id}/tree and /sources/${id}/file.`);
  const [{ content }] = await rows<{ content: string | null }>(deps.ds, `SELECT content FROM sources WHERE id = $1`, [id]);
  return { source: sourceRow(src), content: String(content ?? '') };
}

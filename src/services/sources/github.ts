import type { Deps } from '../../deps';
import { DomainError, notFound } from '../../errors';
import { logger } from '../../logger';
import { checkRef, checkRepoPath } from './paths';
import { decryptToken } from './secrets';
import { sourceRecord, sourceRow, type SourceRecord, type SourceRow } from './sources';

/**
 * The read-only repository bridge: GitHub's REST contents API (GITHUB_API_URL, so GitHub Enterprise
 * works), with the source's token when it has one, every answer cached by URL with its ETag (a
 * conditional request that answers 304 is served from the cache and does not count against the
 * host's rate limit).
 */
export interface TreeEntry {
  name: string;
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'submodule';
  size: number;
  sha: string;
}

export interface RepoListing {
  source: SourceRow;
  ref: string;
  path: string;
  entries: TreeEntry[];
  cached: boolean;
}

export interface RepoFile {
  source: SourceRow;
  ref: string;
  path: string;
  size: number;
  sha: string;
  encoding: 'utf-8' | 'base64';
  content: string;
  cached: boolean;
}

type Json = Record<string, unknown>;

async function fetchContents(deps: Pick<Deps, 'ds' | 'config'>, src: SourceRecord, path: string, ref: string): Promise<{ body: unknown; cached: boolean }> {
  const [owner, name] = src.repository!.split('/');
  const base = deps.config.GITHUB_API_URL.replace(/\/+$/, '');
  const encodedPath = path ? `/${path.split('/').map(encodeURIComponent).join('/')}` : '';
  const url = `${base}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/contents${encodedPath}?ref=${encodeURIComponent(ref)}`;
  const cachedRows: Array<{ etag: string; body: unknown }> = await deps.ds.query(`SELECT etag, body FROM source_cache WHERE source_id = $1 AND url = $2`, [src.id, url]);
  const headers: Record<string, string> = {
    Accept: 'application/vnd.github+json',
    'User-Agent': 'metric-priced-proposals',
    'X-GitHub-Api-Version': '2022-11-28',
  };
  if (src.tokenEnc) headers.Authorization = `Bearer ${decryptToken(src.tokenEnc, deps.config.SOURCE_TOKEN_KEY)}`;
  if (cachedRows.length) headers['If-None-Match'] = cachedRows[0].etag;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(deps.config.SOURCE_FETCH_TIMEOUT_MS), redirect: 'follow' });
  } catch (err) {
    logger.warn({ err, sourceId: src.id }, 'repository host unreachable');
    throw new DomainError('source_upstream_failed', `The repository host did not answer (${(err as Error).name}); try again later.`, { upstreamStatus: 0 });
  }
  if (res.status === 304 && cachedRows.length) return { body: cachedRows[0].body, cached: true };
  if (res.status === 404) throw notFound(`"${path || '/'}" at ref ${ref} in ${src.repository}`);
  if (!res.ok) {
    const text = (await res.text().catch(() => '')).slice(0, 300);
    let message = text;
    try {
      message = String((JSON.parse(text) as Json).message ?? text);
    } catch {
      // not JSON: the text as it came
    }
    const why = res.status === 401 ? 'the token was refused' : res.status === 403 || res.status === 429 ? 'access was refused or rate-limited' : 'it failed';
    throw new DomainError('source_upstream_failed', `The repository host answered ${res.status} (${why})${message ? `: ${message}` : ''}.`, { upstreamStatus: res.status });
  }
  const body = (await res.json()) as unknown;
  const etag = res.headers.get('etag');
  if (etag) {
    await deps.ds.query(
      `INSERT INTO source_cache (source_id, url, etag, body, fetched_at) VALUES ($1, $2, $3, $4::jsonb, now())
       ON CONFLICT (source_id, url) DO UPDATE SET etag = EXCLUDED.etag, body = EXCLUDED.body, fetched_at = now()`,
      [src.id, url, etag, JSON.stringify(body)],
    );
  }
  return { body, cached: false };
}

async function githubSource(deps: Pick<Deps, 'ds'>, workspaceId: string, id: string): Promise<SourceRecord> {
  const src = await sourceRecord(deps, workspaceId, id);
  if (src.type !== 'github') throw new DomainError('validation_failed', `Source ${id} is a text source; read it with /sources/${id}/text.`);
  return src;
}

const refOf = (src: SourceRecord, ref: string | undefined) => checkRef(ref ?? src.defaultRef ?? 'HEAD');

/** One directory of the repository at a ref (the default ref, else HEAD), entries sorted directories first. */
export async function repoTree(deps: Pick<Deps, 'ds' | 'config'>, workspaceId: string, id: string, q: { ref?: string; path?: string }): Promise<RepoListing> {
  const src = await githubSource(deps, workspaceId, id);
  const path = checkRepoPath(q.path);
  const ref = refOf(src, q.ref);
  const { body, cached } = await fetchContents(deps, src, path, ref);
  if (!Array.isArray(body)) throw new DomainError('validation_failed', `"${path}" is a file at ref ${ref}; read it with /sources/${id}/file?path=${path}.`);
  const entries = (body as Json[])
    .map((e) => ({ name: String(e.name), path: String(e.path), type: String(e.type) as TreeEntry['type'], size: Number(e.size ?? 0), sha: String(e.sha ?? '') }))
    .sort((a, b) => (a.type === 'dir' ? 0 : 1) - (b.type === 'dir' ? 0 : 1) || a.name.localeCompare(b.name));
  return { source: sourceRow(src), ref, path, entries, cached };
}

/** One file at a ref: UTF-8 text as it is, anything else base64; larger than SOURCE_MAX_FILE_BYTES is refused. */
export async function repoFile(deps: Pick<Deps, 'ds' | 'config'>, workspaceId: string, id: string, q: { ref?: string; path?: string }): Promise<RepoFile> {
  const src = await githubSource(deps, workspaceId, id);
  const path = checkRepoPath(q.path);
  if (!path) throw new DomainError('validation_failed', 'Name a file with path (the root is a directory: browse it with /tree).');
  const ref = refOf(src, q.ref);
  const { body, cached } = await fetchContents(deps, src, path, ref);
  if (Array.isArray(body)) throw new DomainError('validation_failed', `"${path}" is a directory at ref ${ref}; browse it with /sources/${id}/tree?path=${path}.`);
  const f = body as Json;
  if (f.type !== 'file') throw new DomainError('validation_failed', `"${path}" is a ${String(f.type)}, not a file.`);
  const size = Number(f.size ?? 0);
  const limit = deps.config.SOURCE_MAX_FILE_BYTES;
  // Over 1 MB the contents API sends no content (encoding "none"): too large either way.
  if (size > limit || (size > 0 && f.encoding !== 'base64')) {
    throw new DomainError('source_file_too_large', `"${path}" is ${size} bytes; this instance serves files of at most ${limit} bytes.`, { size, limit });
  }
  const raw = Buffer.from(String(f.content ?? ''), 'base64');
  if (raw.length > limit) throw new DomainError('source_file_too_large', `"${path}" is ${raw.length} bytes; this instance serves files of at most ${limit} bytes.`, { size: raw.length, limit });
  let encoding: RepoFile['encoding'] = 'utf-8';
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    if (content.includes('\u0000')) throw new Error('binary');
  } catch {
    encoding = 'base64';
    content = raw.toString('base64');
  }
  return { source: sourceRow(src), ref, path, size: raw.length, sha: String(f.sha ?? ''), encoding, content, cached };
}

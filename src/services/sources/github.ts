import type { Deps } from '../../deps';
import { DomainError, notFound } from '../../errors';
import { checkRef, checkRepoPath } from './paths';
import { decryptToken } from './secrets';
import { getUpstream } from './upstream';
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

/** The most one answer of the host may hold: a file's base64 (4/3, with line breaks) or a large listing. */
const answerLimit = (fileLimit: number) => Math.max(Math.ceil(fileLimit * 1.4), 4 * 1_048_576) + 65_536;

function tokenOf(deps: Pick<Deps, 'config'>, src: SourceRecord): string {
  try {
    return decryptToken(src.tokenEnc!, deps.config.SOURCE_TOKEN_KEY);
  } catch (err) {
    if (err instanceof DomainError) throw err; // no SOURCE_TOKEN_KEY at all
    throw new DomainError('source_token_unreadable', `The token stored for source ${src.id} can no longer be unsealed (SOURCE_TOKEN_KEY changed since it was put): put it again with PUT /sources/${src.id} { token }.`, { sourceId: src.id });
  }
}

/** The seconds until a spent rate limit resets: Retry-After, else X-RateLimit-Reset, else a minute. */
function retryAfterOf(h: Record<string, string | string[] | undefined>, now: number): number {
  const after = Number(h['retry-after']);
  if (Number.isFinite(after) && after > 0) return Math.ceil(after);
  const reset = Number(h['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - now / 1000));
  return 60;
}

/** One GET of the host's API (a path under it), its ETag cache, and every answer mapped to a coded error. */
async function fetchApi(deps: Pick<Deps, 'ds' | 'config'>, src: SourceRecord, apiPath: string, what: string): Promise<{ body: unknown; cached: boolean }> {
  const base = deps.config.GITHUB_API_URL.replace(/\/+$/, '');
  const url = `${base}${apiPath}`;
  const cachedRows: Array<{ etag: string; body: unknown }> = await deps.ds.query(`SELECT etag, body FROM source_cache WHERE source_id = $1 AND url = $2`, [src.id, url]);
  const headers: Record<string, string> = {
    Accept: 'application/vnd.github+json',
    'User-Agent': 'metric-priced-proposals',
    'X-GitHub-Api-Version': '2022-11-28',
  };
  if (src.tokenEnc) headers.Authorization = `Bearer ${tokenOf(deps, src)}`;
  if (cachedRows.length) headers['If-None-Match'] = cachedRows[0].etag;
  const policy = { timeoutMs: deps.config.SOURCE_FETCH_TIMEOUT_MS, allowPrivate: deps.config.SOURCE_ALLOW_PRIVATE, maxBytes: answerLimit(deps.config.SOURCE_MAX_FILE_BYTES) };
  const res = await getUpstream(url, headers, policy);
  if (res.status === 304 && cachedRows.length) return { body: cachedRows[0].body, cached: true };
  if (res.status === 404) throw notFound(what);
  if (res.status >= 300 && res.status < 400) {
    throw new DomainError('source_upstream_redirect', `The repository host answered ${res.status} (a redirect); the bridge follows none. Point GITHUB_API_URL at the API itself, or correct the repository name.`, { upstreamStatus: res.status });
  }
  const limitSpent = res.status === 429 || (res.status === 403 && res.headers['x-ratelimit-remaining'] === '0');
  if (limitSpent) {
    const retryAfter = retryAfterOf(res.headers, Date.now());
    throw new DomainError('source_upstream_rate_limited', `The repository host's rate limit is spent; try again in ${retryAfter} s (a token raises the limit).`, { retryAfter, upstreamStatus: res.status });
  }
  if (res.status < 200 || res.status >= 300) {
    const why = res.status === 401 ? 'the token was refused' : res.status === 403 ? 'access was refused' : res.status >= 500 ? 'the host failed' : 'the request was refused';
    throw new DomainError('source_upstream_failed', `The repository host answered ${res.status}: ${why}.`, { upstreamStatus: res.status });
  }
  let body: unknown;
  const type = String(res.headers['content-type'] ?? '');
  try {
    if (!/json/i.test(type)) throw new Error('not json');
    body = JSON.parse(res.body.toString('utf8')) as unknown;
    if (body === null || typeof body !== 'object') throw new Error('not an object');
  } catch {
    throw new DomainError('source_upstream_invalid', `The repository host answered ${res.status} with ${type.split(';')[0] || 'an untyped body'} rather than its API's JSON: GITHUB_API_URL may name the site rather than its API (GitHub Enterprise needs /api/v3).`, { upstreamStatus: res.status });
  }
  const etag = res.headers.etag;
  if (etag) {
    await deps.ds.query(
      `INSERT INTO source_cache (source_id, url, etag, body, fetched_at) VALUES ($1, $2, $3, $4::jsonb, now())
       ON CONFLICT (source_id, url) DO UPDATE SET etag = EXCLUDED.etag, body = EXCLUDED.body, fetched_at = now()`,
      [src.id, url, etag, JSON.stringify(body)],
    );
  }
  return { body, cached: false };
}

const repoPath = (src: SourceRecord) => {
  const [owner, name] = src.repository!.split('/');
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
};

function fetchContents(deps: Pick<Deps, 'ds' | 'config'>, src: SourceRecord, path: string, ref: string): Promise<{ body: unknown; cached: boolean }> {
  const encodedPath = path ? `/${path.split('/').map(encodeURIComponent).join('/')}` : '';
  return fetchApi(deps, src, `${repoPath(src)}/contents${encodedPath}?ref=${encodeURIComponent(ref)}`, `"${path || '/'}" at ref ${ref} in ${src.repository}`);
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
  if (size > limit) {
    throw new DomainError('source_file_too_large', `"${path}" is ${size} bytes; this instance serves files of at most ${limit} bytes.`, { size, limit });
  }
  let content64 = String(f.content ?? '');
  // Over 1 MB the contents API sends no content (encoding "none"): the blob, by its sha, carries it.
  if (size > 0 && f.encoding !== 'base64') {
    const blob = (await fetchApi(deps, src, `${repoPath(src)}/git/blobs/${encodeURIComponent(String(f.sha ?? ''))}`, `the blob of "${path}" in ${src.repository}`)).body as Json;
    if (blob.encoding !== 'base64') throw new DomainError('source_upstream_invalid', `The repository host sent the blob of "${path}" as ${String(blob.encoding)}, not base64.`, { upstreamStatus: 200 });
    content64 = String(blob.content ?? '');
  }
  const raw = Buffer.from(content64, 'base64');
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

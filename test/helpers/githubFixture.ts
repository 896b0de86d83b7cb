import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';

/**
 * A local stand-in for GitHub's REST contents API (GET /repos/{owner}/{repo}/contents/{path}?ref=),
 * with ETags and 304s, a private repository behind a bearer token, and files of every kind the bridge
 * must handle. Never the internet.
 */
export interface FixtureFile {
  content: Buffer;
  /** Reported size when it differs from the content (GitHub sends no content over 1 MB). */
  size?: number;
}

/** An answer the fixture gives instead of the contents API's (failure cases): raw status, headers and body, after an optional delay. */
export interface RawAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
}

export interface GithubFixture {
  url: string;
  /** Consulted first on every request; a non-null answer is sent as it is. */
  special: (path: string) => RawAnswer | null;
  requests: Array<{ path: string; auth: string | undefined; ifNoneMatch: string | undefined; status: number }>;
  close(): Promise<void>;
}

const sha = (b: Buffer | string) => createHash('sha1').update(b).digest('hex');

export async function startGithubFixture(repos: Record<string, { token?: string; refs: Record<string, Record<string, FixtureFile>> }>): Promise<GithubFixture> {
  const requests: GithubFixture['requests'] = [];
  const blobs = new Map<string, Buffer>();
  for (const repo of Object.values(repos)) for (const files of Object.values(repo.refs)) for (const f of Object.values(files)) blobs.set(sha(f.content), f.content);
  const answer = (req: IncomingMessage): { status: number; body?: unknown } => {
    const u = new URL(req.url ?? '/', 'http://fixture');
    // The git blobs API: any size, always base64 (what the bridge reads above the contents API's 1 MB).
    const blob = /^\/repos\/[^/]+\/[^/]+\/git\/blobs\/([0-9a-f]{40})$/.exec(u.pathname);
    if (blob) {
      const content = blobs.get(blob[1]);
      return content ? { status: 200, body: { sha: blob[1], size: content.length, encoding: 'base64', content: content.toString('base64') } } : { status: 404, body: { message: 'Not Found' } };
    }
    const m = /^\/repos\/([^/]+)\/([^/]+)\/contents(?:\/(.*))?$/.exec(u.pathname);
    if (!m) return { status: 404, body: { message: 'Not Found' } };
    const repo = repos[`${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`];
    if (!repo) return { status: 404, body: { message: 'Not Found' } };
    const auth = req.headers.authorization;
    if (repo.token) {
      if (!auth) return { status: 404, body: { message: 'Not Found' } };
      if (auth !== `Bearer ${repo.token}`) return { status: 401, body: { message: 'Bad credentials' } };
    }
    const files = repo.refs[u.searchParams.get('ref') ?? 'HEAD'];
    if (!files) return { status: 404, body: { message: 'No commit found for the ref' } };
    const path = (m[3] ?? '').split('/').map(decodeURIComponent).join('/');
    const file = files[path];
    if (file) {
      const size = file.size ?? file.content.length;
      const inline = size <= 1_048_576;
      return {
        status: 200,
        body: { type: 'file', name: path.split('/').pop(), path, size, sha: sha(file.content), encoding: inline ? 'base64' : 'none', content: inline ? file.content.toString('base64') : '' },
      };
    }
    const prefix = path ? `${path}/` : '';
    const children = new Map<string, { type: 'file' | 'dir'; size: number; sha: string }>();
    for (const [p, f] of Object.entries(files)) {
      if (!p.startsWith(prefix)) continue;
      const rest = p.slice(prefix.length).split('/');
      if (rest.length === 1) children.set(rest[0], { type: 'file', size: f.size ?? f.content.length, sha: sha(f.content) });
      else if (!children.has(rest[0])) children.set(rest[0], { type: 'dir', size: 0, sha: sha(prefix + rest[0]) });
    }
    if (!children.size) return { status: 404, body: { message: 'Not Found' } };
    return { status: 200, body: [...children].map(([name, c]) => ({ name, path: prefix + name, ...c })) };
  };
  const fixture = { special: (() => null) as GithubFixture['special'] };
  const server: Server = createServer((req, res) => {
    const raw = fixture.special(req.url ?? '');
    if (raw) {
      requests.push({ path: req.url ?? '', auth: req.headers.authorization, ifNoneMatch: req.headers['if-none-match'], status: raw.status });
      const send = () => {
        res.writeHead(raw.status, raw.headers ?? {});
        res.end(raw.body ?? '');
      };
      if (raw.delayMs) setTimeout(send, raw.delayMs);
      else send();
      return;
    }
    const { status, body } = answer(req);
    const text = JSON.stringify(body ?? {});
    const etag = `"${sha(text)}"`;
    const ifNoneMatch = req.headers['if-none-match'];
    const final = status === 200 && ifNoneMatch === etag ? 304 : status;
    requests.push({ path: req.url ?? '', auth: req.headers.authorization, ifNoneMatch, status: final });
    if (final === 304) {
      res.writeHead(304, { ETag: etag });
      res.end();
      return;
    }
    res.writeHead(final, { 'Content-Type': 'application/json', ...(final === 200 ? { ETag: etag } : {}) });
    res.end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return Object.assign(fixture, {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  });
}

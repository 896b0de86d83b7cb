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

export interface GithubFixture {
  url: string;
  requests: Array<{ path: string; auth: string | undefined; ifNoneMatch: string | undefined; status: number }>;
  close(): Promise<void>;
}

const sha = (b: Buffer | string) => createHash('sha1').update(b).digest('hex');

export async function startGithubFixture(repos: Record<string, { token?: string; refs: Record<string, Record<string, FixtureFile>> }>): Promise<GithubFixture> {
  const requests: GithubFixture['requests'] = [];
  const answer = (req: IncomingMessage): { status: number; body?: unknown } => {
    const u = new URL(req.url ?? '/', 'http://fixture');
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
  const server: Server = createServer((req, res) => {
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
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

import type { Response } from 'supertest';
import type { TestApp } from './harness';

/**
 * A large deletion (DELETE /workspaces/{id}, DELETE /agents/{id}) answers 202 with its deletion; this
 * polls the deletion's statusUrl (as the master key) until it is done, and fails on failed or after
 * `timeoutMs`. Returns the DELETE's answer and the finished deletion.
 */
export async function waitForDeletion<R extends Pick<Response, 'status' | 'body'>>(app: TestApp, del: R, timeoutMs = 60_000): Promise<{ res: R; deletion: Record<string, unknown> }> {
  if (del.status !== 202) throw new Error(`expected 202 from the DELETE, got ${del.status}: ${JSON.stringify(del.body)}`);
  const url: string = del.body.statusUrl ?? del.body.deletion?.statusUrl;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const got = await app.http.get(url).set('X-API-Key', app.masterKey);
    if (got.status !== 200) throw new Error(`GET ${url} answered ${got.status}: ${JSON.stringify(got.body)}`);
    if (got.body.state === 'done') return { res: del, deletion: got.body };
    if (Date.now() > until) throw new Error(`deletion ${url} not done within ${timeoutMs} ms: ${JSON.stringify(got.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** DELETE `path` with the given headers, then wait until its deletion is done. */
export async function deleteAndWait(app: TestApp, path: string, headers: Record<string, string>): Promise<{ res: Response; deletion: Record<string, unknown> }> {
  let req = app.http.delete(path);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return waitForDeletion(app, await req);
}

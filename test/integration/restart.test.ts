import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { ensureLocalServices } from '../../src/boot/localServices';
import { logger } from '../../src/logger';
import { connectThroughOAuth, mcpUrl } from '../helpers/mcp';
import { expectLedgerSound, startTestApp, type TestApp } from '../helpers/harness';
import type { TestPerson } from '../helpers/accounts';

/**
 * Issue 64: sign-ins outlive a restart. An instance with no AUTH_SECRET generates one once, keeps it
 * in a file and reads it on the next start; a new AUTH_SECRET rotates the signing key (old access
 * tokens end, sign-in works) instead of failing every session read. Its own database: a rotation
 * drops signing keys, which the other suites' connections on the shared database rely on.
 */
describe('restarts keep sign-ins (issue 64)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mpps-restart-'));
  const secretFile = join(dir, 'auth-secret');
  const dbUrl = (() => {
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `/mpps_restart_${Date.now()}_${process.pid}`;
    return u.toString();
  })();
  let app: TestApp | undefined;
  let port = 0;
  const env = () => ({
    DATABASE_URL: dbUrl,
    NODE_ENV: 'development',
    AUTH_SECRET: '',
    AUTH_SECRET_FILE: secretFile,
    PUBLIC_BASE_URL: port ? `http://127.0.0.1:${port}` : 'listening',
  });
  const start = async (extra: Record<string, string> = {}) => {
    const { AUTH_SECRET, ...rest } = { ...env(), ...extra };
    // An empty AUTH_SECRET is "not set" here: the process environment of the run has none either.
    const vars: Record<string, string> = AUTH_SECRET ? { ...rest, AUTH_SECRET } : rest;
    if (!AUTH_SECRET) delete process.env.AUTH_SECRET;
    app = await startTestApp(vars, { workers: false, migrate: true, port });
    port = (app.server.address() as AddressInfo).port;
    return app;
  };
  const stop = async () => {
    await app?.close();
    app = undefined;
  };
  const signIn = (a: TestApp, person: { email: string; password: string }) => request(a.server).post('/api/auth/sign-in/email').send(person);
  const cookieOf = (res: request.Response) => ((res.headers['set-cookie'] as unknown as string[]) ?? []).map((c) => c.split(';')[0]).find((c) => c.startsWith('mpps.session_token='));
  const mcpStatus = async (a: TestApp, token: string) =>
    (
      await request(a.server)
        .post('/mcp')
        .set('Authorization', `Bearer ${token}`)
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'restart', version: '1' } } })
    ).status;

  afterAll(async () => {
    await stop();
    const admin = new URL(dbUrl);
    admin.pathname = '/postgres';
    const c = new Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${new URL(dbUrl).pathname.slice(1)}" WITH (FORCE)`);
    await c.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it('production without AUTH_SECRET stops the start with one sentence', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/^AUTH_SECRET is not set: with NODE_ENV=production set it to 32 or more random characters/);
    expect(loadConfig({ NODE_ENV: 'production', AUTH_SECRET: 'x'.repeat(32) }).authSecret).toBe('x'.repeat(32));
  });

  it('no AUTH_SECRET: generated once, kept, never printed; the session, the sign-in and the connection survive a restart; a new AUTH_SECRET ends old tokens and sign-in works', async () => {
    // The start-up line (the same step main runs) says where the secret is kept, not what it is.
    const lines: string[] = [];
    const spy = jest.spyOn(logger, 'info').mockImplementation(((...args: unknown[]) => void lines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '))) as never);
    try {
      await ensureLocalServices(loadConfig({ ...process.env, ...env(), AUTH_SECRET: undefined }));
    } finally {
      spy.mockRestore();
    }
    const secret = readFileSync(secretFile, 'utf8').trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    const accountsLine = lines.find((l) => l.startsWith('accounts:'));
    expect(accountsLine).toMatch(`accounts: secret from generated now and kept in ${secretFile}; session cookie plain mpps.session_token, not Secure (PUBLIC_BASE_URL is http); account mail (reset links) written to this log at info`);
    expect(lines.join('\n')).not.toContain(secret);

    let a = await start();
    const email = `restart-${Date.now()}@example.com`;
    const person = { email, password: 'restart-password-1' };
    expect((await request(a.server).post('/api/auth/sign-up/email').send({ ...person, name: 'Rita Restart' })).status).toBe(200);
    const first = await signIn(a, person);
    expect(first.status).toBe(200);
    const cookie = cookieOf(first)!;
    expect(cookie).toBeDefined();
    // get-session signs a JWT with the stored key: this is the request a changed secret broke.
    expect((await request(a.server).get('/api/auth/get-session').set('Cookie', cookie)).status).toBe(200);
    const browser = request.agent(a.server);
    await browser.post('/api/auth/sign-in/email').send(person);
    const me = await browser.get('/api/agents/me');
    const connected = await connectThroughOAuth(a, { ...person, browser, agentId: me.body.id } as TestPerson);
    const token = connected.provider.tokens()!.access_token;
    await connected.client.close();
    expect(await mcpStatus(a, token)).toBe(200);
    await stop();

    // The same instance again, still no AUTH_SECRET: the same secret is read back.
    a = await start();
    expect(readFileSync(secretFile, 'utf8').trim()).toBe(secret);
    const again = await request(a.server).get('/api/auth/get-session').set('Cookie', cookie);
    expect(again.status).toBe(200);
    expect(again.body.user).toMatchObject({ email });
    expect((await request(a.server).get('/api/agents/me').set('Cookie', cookie)).body.id).toBe(me.body.id);
    expect(await mcpStatus(a, token)).toBe(200);
    expect((await signIn(a, person)).status).toBe(200);
    await stop();

    // A new secret: the old cookie and the old access token end (401, not 500); signing in works.
    a = await start({ AUTH_SECRET: `a-new-secret-${'n'.repeat(32)}` });
    const stale = await request(a.server).get('/api/agents/me').set('Cookie', cookie);
    expect(stale.status).toBe(401);
    expect((await request(a.server).get('/api/auth/get-session').set('Cookie', cookie)).status).toBe(200); // null: no session
    expect(await mcpStatus(a, token)).toBe(401);
    const fresh = await signIn(a, person);
    expect(fresh.status).toBe(200);
    const freshCookie = cookieOf(fresh)!;
    const session = await request(a.server).get('/api/auth/get-session').set('Cookie', freshCookie);
    expect(session.status).toBe(200);
    expect(session.body.user).toMatchObject({ email });
    expect((await request(a.server).get('/api/agents/me').set('Cookie', freshCookie)).body.id).toBe(me.body.id);
    // A connection made now works under the new key.
    const browser2 = request.agent(a.server);
    await browser2.post('/api/auth/sign-in/email').send(person);
    const reconnected = await connectThroughOAuth(a, { ...person, browser: browser2, agentId: me.body.id } as TestPerson);
    expect((await reconnected.client.listTools()).tools.length).toBeGreaterThan(0);
    await reconnected.client.close();
    expect(mcpUrl(a).port).toBe(String(port));
    await expectLedgerSound(a.deps);
  });
});

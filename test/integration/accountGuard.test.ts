import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { SMTPServer } from 'smtp-server';
import { consumePoint } from '../../src/services/access';
import { mailerFor, useMailer } from '../../src/services/accounts';
import { signUp } from '../helpers/accounts';
import { useTestApp, type TestApp } from '../helpers/harness';
import { connectThroughOAuth, mcpUrl } from '../helpers/mcp';
import { registerClient } from '@modelcontextprotocol/sdk/client/auth.js';

/** Issue 55: the account system's routes are limited like the rest of the API, and its mail is sent. */
describe('the account system: limits, brakes and mail (issue 55)', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), {
    PUBLIC_BASE_URL: 'listening',
    RATE_LIMIT_CLIENT_REGISTRATION_PER_HOUR: '3',
    SIGNIN_ATTEMPTS_PER_EMAIL: '5',
    RATE_LIMIT_AUTH_PER_MINUTE: '200',
  });

  // First: the flood below spends this address's registrations, and connecting registers a client.
  it('the reset mail arrives on a real SMTP server; its link is followed; the reset ends every session and, ticked, every connection', async () => {
    const person = await signUp(app);
    const { client, provider } = await connectThroughOAuth(app, person, { redirectUrl: 'http://127.0.0.1:8123/callback' });
    expect((await client.callTool({ name: 'whoami', arguments: {} })).isError).toBeFalsy();
    await client.close();
    const received: Array<{ to: string[]; data: string }> = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, done) {
        let data = '';
        stream.on('data', (c: Buffer) => (data += c.toString('utf8')));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    const prior = useMailer(mailerFor({ SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, MAIL_FROM: 'accounts@mpp.example', development: false }));
    try {
      expect((await request(app.server).post('/api/auth/request-password-reset').send({ email: person.email, redirectTo: '/reset' })).status).toBe(200);
      expect(received).toHaveLength(1);
      expect(received[0].to).toEqual([person.email]);
      // Quoted-printable soft breaks undone, the link is read out of the mail as a person would click it.
      const text = received[0].data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      const link = new URL(/(http:\/\/\S+\/reset-password\/\S+)/.exec(text)![1]);
      const followed = await request(app.server).get(`${link.pathname}${link.search}`).redirects(0);
      expect(followed.status).toBe(302);
      const token = new URL(followed.headers.location, link).searchParams.get('token');
      expect(token).toBeTruthy();
      const reset = await request(app.server).post('/api/auth/reset-password').send({ token, newPassword: 'a brand new secret', endConnections: true });
      expect(reset.status).toBe(200);
    } finally {
      useMailer(prior);
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    }
    expect((await person.browser.get('/api/agents/me')).status).toBe(401);
    expect((await request(app.server).post('/api/auth/sign-in/email').send({ email: person.email, password: 'a brand new secret' })).status).toBe(200);
    const [conn] = await app.deps.ds.query(`SELECT revoked_at FROM connections WHERE agent_id = $1`, [person.agentId]);
    expect(conn.revoked_at).not.toBeNull();
    const refused = await fetch(mcpUrl(app), {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.tokens()!.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(refused.status).toBe(401);
    // Production without SMTP_URL has no sender at all (reset links never go to a log there); zero-setup writes them to the log.
    expect(mailerFor({ SMTP_URL: undefined, MAIL_FROM: 'x@y', development: false })).toBeNull();
    expect(mailerFor({ SMTP_URL: undefined, MAIL_FROM: 'x@y', development: false, zeroSetup: true })).not.toBeNull();
    // With no sender, asking for a reset says mail is off here (issue 64), instead of "check your email".
    const before = useMailer(null);
    try {
      const off = await request(app.server).post('/api/auth/request-password-reset').send({ email: person.email });
      expect(off.status).toBe(503);
      expect(off.body).toMatchObject({ code: 'reset_mail_not_configured', error: expect.stringMatching(/^Password reset mail is not configured on this instance/) });
      const page = await request(app.server).post('/reset-password').set('Origin', app.deps.config.PUBLIC_BASE_URL).type('form').send({ form: 'reset-request', email: person.email });
      expect(page.text).toContain('Password reset mail is not configured on this instance');
    } finally {
      useMailer(before);
    }
  });

  it('a registration flood from one address is answered 429 with Retry-After', async () => {
    const statuses: number[] = [];
    let last: request.Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await request(app.server)
        .post('/api/auth/oauth2/register')
        .send({ client_name: `Flood ${i}`, redirect_uris: ['http://127.0.0.1:3000/cb'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] });
      statuses.push(last.status);
    }
    // The limit is 3 an hour; the connection above registered one.
    expect(statuses).toEqual([201, 201, 429, 429, 429]);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    // In OAuth's shape (issue 64): a host shows error_description; the SDK's own registration says the sentence.
    expect(last!.body).toMatchObject({ code: 'rate_limited', error: 'too_many_requests', error_description: expect.stringMatching(/3 client registrations an hour/) });
    const base = new URL(app.deps.config.PUBLIC_BASE_URL);
    await expect(
      registerClient(new URL('/api/auth', base), {
        metadata: (await request(app.server).get('/.well-known/oauth-authorization-server/api/auth')).body,
        clientMetadata: { client_name: 'Flood SDK', redirect_uris: ['http://127.0.0.1:3000/cb'], token_endpoint_auth_method: 'none' } }),
    ).rejects.toThrow(/3 client registrations an hour/);
  });

  it('a sign-in flood is braked per email, even for the right password, and the brake lives in the shared store', async () => {
    const person = await signUp(app); // one sign-in
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await request(app.server).post('/api/auth/sign-in/email').send({ email: person.email, password: 'wrong password!' })).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    const right = await request(app.server).post('/api/auth/sign-in/email').send({ email: person.email, password: person.password });
    expect(right.status).toBe(429);
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    expect(right.body.error).toMatch(/5 sign-in attempts per email in 15 minutes/);
    // The sign-in page of the OAuth flow is braked by the same count.
    const page = await request(app.server).post('/oauth/sign-in').type('form').send({ email: person.email, password: person.password, oauth_query: '' });
    expect(page.status).toBe(429);
    // A restarted process (fresh limiters, nothing in memory) reads the same count from the store.
    const restarted = { config: app.deps.config, redis: app.deps.redis, ds: app.deps.ds } as typeof app.deps;
    await expect(consumePoint(restarted, 'signin_email', person.email.toLowerCase())).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('an oversize body to /api/auth is refused 413 without being read; a long account name is refused', async () => {
    const port = (app.server.address() as AddressInfo).port;
    const declared = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/api/auth/sign-up/email', headers: { 'content-type': 'application/json', 'content-length': String(200 * 1024 * 1024) } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      r.on('error', reject);
      r.write('{"name":"'); // 9 bytes of the 200 MB it announced: the answer comes without the rest
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ code: 'payload_too_large', error: expect.stringMatching(/nothing was read/) });
    const huge = await request(app.server).post('/api/auth/sign-up/email').send({ email: 'huge@example.com', password: 'correct horse battery', name: 'x'.repeat(1_000_000) });
    expect(huge.status).toBe(413);
    const long = await request(app.server).post('/api/auth/sign-up/email').send({ email: 'long@example.com', password: 'correct horse battery', name: 'x'.repeat(201) });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ code: 'account_refused', error: expect.stringMatching(/at most 200 characters/) });
    expect(await app.deps.ds.query(`SELECT 1 FROM auth_users WHERE email IN ('huge@example.com', 'long@example.com')`)).toEqual([]);
  });

  it('every /api/auth route is limited per address', async () => {
    let status = 0;
    let n = 0;
    while (status !== 429 && n < 260) {
      status = (await request(app.server).get('/api/auth/get-session')).status;
      n++;
    }
    expect(status).toBe(429);
    expect(n).toBeLessThanOrEqual(201);
  });
});

import request from 'supertest';
import { useMailer, type AccountMail } from '../../src/services/accounts';
import { signUp } from '../helpers/accounts';
import { registerAgent } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';

describe('accounts: email and password sessions (spec §5.1)', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), { ONBOARDING_OPEN: 'true', UNCLAIMED_SIGNUP_CREDITS: '100', SIGNUP_CREDITS: '1000' });

  it('sign-up creates the account\'s participant and answers alike for a taken email; sign-in sets an HttpOnly SameSite=Lax session cookie; sign-out ends it; sign-in resolves to the same participant', async () => {
    const browser = request.agent(app.server);
    const up = await browser.post('/api/auth/sign-up/email').send({ email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace' });
    expect(up.status).toBe(200);
    expect(up.headers['set-cookie']).toBeUndefined(); // sign-up signs nobody in
    // The same email again: the same status and shape, no hint that the account exists (issue 55).
    const taken = await request(app.server).post('/api/auth/sign-up/email').send({ email: 'ada@example.com', password: 'another password!', name: 'Not Ada' });
    expect(taken.status).toBe(200);
    expect(Object.keys(taken.body).sort()).toEqual(Object.keys(up.body).sort());
    expect(Object.keys(taken.body.user).sort()).toEqual(Object.keys(up.body.user).sort());
    const first = await browser.post('/api/auth/sign-in/email').send({ email: 'ada@example.com', password: 'correct horse battery' });
    expect(first.status).toBe(200);
    const cookie = (first.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('mpps.session_token='));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i); // PUBLIC_BASE_URL is plain http: a plain cookie (issue 64), kept by every client
    const me = await browser.get('/api/agents/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ nickname: 'Ada-Lovelace', balance: 0 });
    const [link] = await app.deps.ds.query(`SELECT a.id FROM agents a JOIN auth_users u ON u.id = a.account_id WHERE u.email = 'ada@example.com'`);
    expect(link.id).toBe(me.body.id);
    const session = await browser.get('/api/auth/get-session');
    expect(session.body.user).toMatchObject({ email: 'ada@example.com', name: 'Ada Lovelace' });

    expect((await browser.post('/api/auth/sign-out').send({})).status).toBe(200);
    expect((await browser.get('/api/agents/me')).status).toBe(401);
    // The old cookie value itself is refused too (the session row is gone), with a sentence.
    const stale = await request(app.server).get('/api/agents/me').set('Cookie', cookie!.split(';')[0]);
    expect(stale.status).toBe(401);
    expect(stale.body).toMatchObject({ code: 'invalid_credentials', error: expect.stringMatching(/sign in again/) });

    const wrong = await browser.post('/api/auth/sign-in/email').send({ email: 'ada@example.com', password: 'wrong password!' });
    expect(wrong.status).toBe(401);
    const inAgain = await browser.post('/api/auth/sign-in/email').send({ email: 'ada@example.com', password: 'correct horse battery' });
    expect(inAgain.status).toBe(200);
    expect((await browser.get('/api/agents/me')).body.id).toBe(me.body.id);
    await expectLedgerSound(app.deps);
  });

  it('a session and the agent key are one identity; sessions bypass key scopes; DELETE /api/auth/me is session-only', async () => {
    const person = await signUp(app);
    // The session mints a narrow key (account:keys is bypassed for sessions).
    const minted = await person.browser.post('/api/agents/me/keys').send({ label: 'reader', scopes: ['workspace:read', 'account:read'] });
    expect(minted.status).toBe(201);
    const key = minted.body.apiKey as string;
    expect((await app.http.get('/api/agents/me').set('X-Agent-Key', key)).body.id).toBe(person.agentId);
    // The key cannot list keys (no account:keys), the session can.
    const byKey = await app.http.get('/api/agents/me/keys').set('X-Agent-Key', key);
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe('scope_denied');
    expect((await person.browser.get('/api/agents/me/keys')).status).toBe(200);

    // Account deletion: no key, not even '*' or the master key.
    const full = await person.browser.post('/api/agents/me/keys').send({ label: 'full', scopes: ['*'] });
    for (const [header, value] of [['X-Agent-Key', full.body.apiKey], ['X-API-Key', app.masterKey]]) {
      const refused = await app.http.delete('/api/auth/me').set(header, value);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'session_required', error: expect.stringMatching(/browser session/) });
    }
    expect((await app.http.delete('/api/auth/me')).status).toBe(401);
    const gone = await person.browser.delete('/api/auth/me');
    expect(gone.status).toBe(204);
    expect((await person.browser.get('/api/agents/me')).status).toBe(401);
    expect((await person.browser.post('/api/auth/sign-in/email').send({ email: person.email, password: person.password })).status).toBe(401);
    // The participant and its keys stay, unlinked.
    expect((await app.http.get('/api/agents/me').set('X-Agent-Key', key)).body.id).toBe(person.agentId);
    const [row] = await app.deps.ds.query(`SELECT account_id FROM agents WHERE id = $1`, [person.agentId]);
    expect(row.account_id).toBeNull();
    await expectLedgerSound(app.deps);
  });

  it('password reset by a token sent through the pluggable sender', async () => {
    const person = await signUp(app);
    const mails: AccountMail[] = [];
    const prior = useMailer(async (m) => {
      mails.push(m);
    });
    try {
      const asked = await request(app.server).post('/api/auth/request-password-reset').send({ email: person.email, redirectTo: '/reset' });
      expect(asked.status).toBe(200);
      expect(mails).toHaveLength(1);
      expect(mails[0]).toMatchObject({ to: person.email, data: { kind: 'password-reset', token: expect.any(String) } });
      // An unknown address answers the same and sends nothing (no account enumeration).
      expect((await request(app.server).post('/api/auth/request-password-reset').send({ email: 'nobody@example.com', redirectTo: '/reset' })).status).toBe(200);
      expect(mails).toHaveLength(1);
      const bad = await request(app.server).post('/api/auth/reset-password').send({ newPassword: 'a brand new secret', token: 'not-a-token' });
      expect(bad.status).toBe(400);
      const reset = await request(app.server).post('/api/auth/reset-password').send({ newPassword: 'a brand new secret', token: mails[0].data.token });
      expect(reset.status).toBe(200);
    } finally {
      useMailer(prior);
    }
    // Sessions end with the reset; the old password no longer works, the new one does.
    expect((await person.browser.get('/api/agents/me')).status).toBe(401);
    const fresh = request.agent(app.server);
    expect((await fresh.post('/api/auth/sign-in/email').send({ email: person.email, password: person.password })).status).toBe(401);
    expect((await fresh.post('/api/auth/sign-in/email').send({ email: person.email, password: 'a brand new secret' })).status).toBe(200);
    expect((await fresh.get('/api/agents/me')).body.id).toBe(person.agentId);
  });

  it('POST /onboard/claim with a session: the account becomes the onboarded participant; keys are refused', async () => {
    const o = (await app.http.post('/api/onboard').send({ workspace: { name: 'Claimed floor' } })).body;
    const human = await registerAgent(app);
    const byKey = await app.http.post('/api/onboard/claim').set('X-Agent-Key', human.key).send({ token: o.claimToken });
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe('session_required');
    const person = await signUp(app);
    const claimed = await person.browser.post('/api/onboard/claim').send({ token: o.claimToken });
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({ ok: true, participantId: o.participantId, creditsToppedUp: 900 });
    // The session and the onboarding key now resolve to one identity; the untouched sign-up participant is gone.
    const viaSession = await person.browser.get('/api/agents/me');
    expect(viaSession.body).toMatchObject({ id: o.participantId, unclaimed: false, balance: 1000 });
    expect((await app.http.get('/api/agents/me').set('X-Agent-Key', o.apiKey)).body.id).toBe(o.participantId);
    expect(await app.deps.ds.query(`SELECT id FROM agents WHERE id = $1`, [person.agentId])).toEqual([]);
    // The account now has an active participant: a second claim is 409, and the token stays usable.
    const second = (await app.http.post('/api/onboard').send({ workspace: { name: 'Second floor' } })).body;
    const twice = await person.browser.post('/api/onboard/claim').send({ token: second.claimToken });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('conflict');
    expect((await app.http.get(`/api/onboard/claim/${second.claimToken}`)).status).toBe(200);
    await expectLedgerSound(app.deps);
  });

  it('the sign-up grant: SIGNUP_CREDITS once per person, for a session only, replayed by its key, never twice under a race; an onboarded and claimed participant already had it', async () => {
    const grant = app.deps.config.SIGNUP_CREDITS;
    expect(grant).toBeGreaterThan(0);
    const person = await signUp(app);
    expect((await person.browser.get('/api/agents/signup-grant')).body).toEqual({ credits: grant, available: true, paidAt: null });
    // A key (even the account's own participant's would be a key) cannot take it.
    const bot = await registerAgent(app);
    const byKey = await app.http.post('/api/agents/signup-grant').set('X-Agent-Key', bot.key);
    expect([byKey.status, byKey.body.code]).toEqual([403, 'session_required']);
    expect((await app.http.get('/api/agents/signup-grant').set('X-Agent-Key', bot.key)).body.available).toBe(false);
    // Two at once with different keys: one pays, the other is refused.
    const keys = ['grant-a-' + person.agentId.slice(0, 8), 'grant-b-' + person.agentId.slice(0, 8)];
    const both = await Promise.all(keys.map((k) => person.browser.post('/api/agents/signup-grant').set('Idempotency-Key', k)));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const won = both.findIndex((r) => r.status === 200);
    expect(both[won].body).toMatchObject({ credits: grant, available: false, balance: grant });
    expect(both[1 - won].body.code).toBe('grant_taken');
    // The winner's key again: the first answer, nothing paid again; any other try: 409.
    const replay = await person.browser.post('/api/agents/signup-grant').set('Idempotency-Key', keys[won]);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ balance: grant, idempotentReplay: true });
    expect((await person.browser.post('/api/agents/signup-grant')).status).toBe(409);
    expect((await person.browser.get('/api/agents/me/balance')).body.balance).toBe(grant);
    const legs = await app.deps.ds.query(`SELECT amount::text FROM ledger_entries WHERE account_id = $1 AND kind = 'signup_grant'`, [`agent:${person.agentId}`]);
    expect(legs).toHaveLength(1);
    const status = (await person.browser.get('/api/agents/signup-grant')).body;
    expect(status.available).toBe(false);
    expect(typeof status.paidAt).toBe('string');
    // A claimed onboarding identity was topped up to the full grant when claimed: nothing more.
    const o = (await app.http.post('/api/onboard').send({ workspace: { name: 'Granted floor' } })).body;
    const claimer = await signUp(app);
    expect((await claimer.browser.post('/api/onboard/claim').send({ token: o.claimToken })).status).toBe(200);
    expect((await claimer.browser.get('/api/agents/signup-grant')).body.available).toBe(false);
    const again = await claimer.browser.post('/api/agents/signup-grant');
    expect([again.status, again.body.code]).toEqual([409, 'grant_taken']);
    await expectLedgerSound(app.deps);
  });
});

describe('accounts behind https', () => {
  let app: TestApp;
  // The test runs' own secret: another one would rotate the signing key the other suites share (restart.test.ts tests that).
  useTestApp((a) => (app = a), { PUBLIC_BASE_URL: 'https://mpps.example' });

  it('the session cookie (set at sign-in) is Secure (with the __Secure- prefix), HttpOnly and SameSite=Lax when PUBLIC_BASE_URL is https', async () => {
    expect((await request(app.server).post('/api/auth/sign-up/email').send({ email: 'secure@example.com', password: 'correct horse battery', name: 'Secure One' })).status).toBe(200);
    const res = await request(app.server).post('/api/auth/sign-in/email').send({ email: 'secure@example.com', password: 'correct horse battery' });
    expect(res.status).toBe(200);
    const cookie = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.includes('mpps.session_token='));
    expect(cookie).toMatch(/^__Secure-mpps\.session_token=/);
    expect(cookie).toMatch(/; Secure/i);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
  });
});

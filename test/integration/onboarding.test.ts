import { expectLedgerSound, uniqueName, useTestApp, type TestApp } from '../helpers/harness';
import { registerAgent } from '../helpers/factories';
import { signUp } from '../helpers/accounts';

describe('onboarding paused (the default)', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), { WAITLIST_URL: 'https://example.org/wait' });

  it.each([
    ['a valid body', { workspace: { name: 'Acme' } }],
    ['an empty body', {}],
    ['an invalid body', { workspace: 7 }],
  ])('always answers 403 with the waitlist, given %s', async (_label, body) => {
    const res = await app.http.post('/api/onboard').send(body);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'onboarding_paused', waitlist: 'https://example.org/wait', error: expect.any(String) });
  });

  it('the waitlist takes an address once (case-insensitively)', async () => {
    const first = await app.http.post('/api/waitlist').send({ email: 'Ada@Example.com' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ ok: true, email: 'Ada@Example.com' });
    const again = await app.http.post('/api/waitlist').send({ email: 'ada@example.com' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    const bad = await app.http.post('/api/waitlist').send({ email: 'not-an-email' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
});

describe('onboarding open', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), { ONBOARDING_OPEN: 'true', UNCLAIMED_SIGNUP_CREDITS: '100', SIGNUP_CREDITS: '1000', PUBLIC_BASE_URL: 'http://mpp.example' });

  const onboard = (body: Record<string, unknown>) => app.http.post('/api/onboard').send(body);

  it('creates an unclaimed, key-first participant owning a new workspace, with the reduced grant and a claim token', async () => {
    const res = await onboard({ workspace: { name: 'Acme Goals', visibility: 'public' }, nickname: 'acme-bot', bio: 'hello' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      participantId: expect.any(String),
      nickname: 'acme-bot',
      apiKey: expect.stringMatching(/^mpk_/),
      keyId: expect.stringMatching(/^key_/),
      scopes: ['*'],
      credits: 100,
      creditsAfterClaim: 1000,
      workspace: {
        id: expect.any(String),
        name: 'Acme Goals',
        slug: expect.stringMatching(/^acme-goals/),
        ownerHandle: 'acme-bot',
        visibility: 'public',
        template: 'blank',
        metricsCreated: 0,
        starterProposalId: null,
      },
      claimToken: expect.stringMatching(/^ct_/),
      claimUrl: expect.stringMatching(/^http:\/\/mpp\.example\/claim\/ct_/),
    });
    const me = await app.http.get('/api/agents/me').set('X-Agent-Key', res.body.apiKey);
    expect(me.body).toMatchObject({ id: res.body.participantId, unclaimed: true, balance: 100, bio: 'hello' });
    // The onboarded participant owns its workspace: every capability, the key defaults to it.
    const cur = await app.http.get('/api/workspaces/current').set('X-Agent-Key', res.body.apiKey);
    expect(cur.body).toMatchObject({ id: res.body.workspace.id, public: true });
    expect(cur.body.capabilities.sort()).toEqual(['manage', 'manage_workspace', 'read', 'trade']);
    await expectLedgerSound(app.deps);
  });

  it('claim: look up, top up to the full grant, consume the token', async () => {
    const o = (await onboard({ workspace: { name: 'Claim Me' } })).body;
    const info = await app.http.get(`/api/onboard/claim/${o.claimToken}`);
    expect(info.status).toBe(200);
    expect(info.body).toEqual({ participantId: o.participantId, nickname: o.nickname, workspaces: [{ id: o.workspace.id, name: 'Claim Me', slug: o.workspace.slug }] });
    expect(o.workspace.visibility).toBe('private');
    // No credentials: 401. Keys cannot claim (a browser session only): not the participant's own, not another's, not the master key.
    expect((await app.http.post('/api/onboard/claim').send({ token: o.claimToken })).status).toBe(401);
    const human = await registerAgent(app);
    for (const [header, value] of [['X-Agent-Key', o.apiKey], ['X-Agent-Key', human.key], ['X-API-Key', app.masterKey]]) {
      const byKey = await app.http.post('/api/onboard/claim').set(header, value).send({ token: o.claimToken });
      expect(byKey.status).toBe(403);
      expect(byKey.body.code).toBe('session_required');
    }
    const person = await signUp(app);
    const claimed = await person.browser.post('/api/onboard/claim').send({ token: o.claimToken });
    expect(claimed.status).toBe(200);
    expect(claimed.body).toEqual({ ok: true, participantId: o.participantId, creditsToppedUp: 900, workspaces: info.body.workspaces });
    const me = await app.http.get('/api/agents/me').set('X-Agent-Key', o.apiKey);
    expect(me.body).toMatchObject({ unclaimed: false, balance: 1000 });
    // Used: 404 (another account tries it).
    expect((await app.http.get(`/api/onboard/claim/${o.claimToken}`)).status).toBe(404);
    const other = await signUp(app);
    expect((await other.browser.post('/api/onboard/claim').send({ token: o.claimToken })).status).toBe(404);
    // The account is the participant now: its session manages the participant's keys.
    expect((await person.browser.get(`/api/agents/${o.participantId}/keys`)).status).toBe(200);
    // An account holds one participant: a second claim is 409.
    const second = (await onboard({ workspace: { name: 'Second' } })).body;
    const twice = await person.browser.post('/api/onboard/claim').send({ token: second.claimToken });
    expect(twice.status).toBe(409);
    await expectLedgerSound(app.deps);
  });

  it('unknown tokens are 404', async () => {
    expect((await app.http.get('/api/onboard/claim/ct_nope')).status).toBe(404);
    const person = await signUp(app);
    const res = await person.browser.post('/api/onboard/claim').send({ token: 'ct_nope' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it.each([
    ['no workspace', {}],
    ['a blank workspace name', { workspace: { name: ' ' } }],
    ['a bad visibility', { workspace: { name: 'X', visibility: 'secret' } }],
    ['a bad nickname', { workspace: { name: 'X' }, nickname: 'a b' }],
    ['an unknown template', { workspace: { name: 'X', template: 'no-such-template' } }],
  ])('refuses %s with 400 and creates nothing', async (_label, body) => {
    // The participant's id is ours to give, so what the request could have created is found by it
    // (other suites onboard on the same database meanwhile: a count of all agents would see theirs).
    const agentId = uniqueName('refused');
    const res = await onboard({ ...body, agentId });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', error: expect.any(String) });
    const [{ agents, workspaces }] = await app.deps.ds.query(
      `SELECT (SELECT count(*)::int FROM agents WHERE id = $1) AS agents, (SELECT count(*)::int FROM workspaces WHERE owner_id = $1) AS workspaces`,
      [agentId],
    );
    expect({ agents, workspaces }).toEqual({ agents: 0, workspaces: 0 });
  });

  it('a taken nickname is 409 and nothing is created', async () => {
    const first = await onboard({ workspace: { name: 'A' }, nickname: 'dup-onboard' });
    expect(first.status).toBe(201);
    const second = await onboard({ workspace: { name: 'B' }, nickname: 'Dup-Onboard' });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('nickname_taken');
  });
});
